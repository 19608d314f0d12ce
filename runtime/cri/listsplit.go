package cri

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// splitRetry is how long GetPods keeps listing pod by pod after a full
// listing overflowed before it tries a full listing again: a doomed full
// listing still makes the runtime encode every object.
const splitRetry = time.Minute

// listSplit is GetPods' memory of overflowed listings and of the pods it
// must list one by one then. It is safe for concurrent use.
type listSplit struct {
	mu sync.Mutex
	// until is when a full listing is tried again; zero while full
	// listings fit.
	until time.Time
	// lists counts the full (all) GetPods listings begun.
	lists uint64
	// created maps the UID of a pod whose sandbox this manager ran to the
	// value of lists then: until a full listing begun after it ends, that
	// sandbox may be in no listing and no cache yet.
	created map[types.UID]uint64
}

// noteCreated records that a sandbox of pod uid was just run.
func (s *listSplit) noteCreated(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.created == nil {
		s.created = map[types.UID]uint64{}
	}
	s.created[uid] = s.lists
}

// begin starts a listing of the given mode at now. It returns the listing's
// number and whether to list pod by pod without trying a full listing.
func (s *listSplit) begin(all bool, now time.Time) (seq uint64, split bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if all {
		s.lists++
	}
	return s.lists, !s.until.IsZero() && now.Before(s.until)
}

// ended records a full listing of number seq that succeeded: the sandboxes
// created before it began are in its answer and the list cache now.
func (s *listSplit) ended(all bool, seq uint64) {
	if !all {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for uid, n := range s.created {
		if n < seq {
			delete(s.created, uid)
		}
	}
}

// setSplit records whether listings overflow from now on, and reports
// whether that changed.
func (s *listSplit) setSplit(split bool, now time.Time) (changed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	was := !s.until.IsZero()
	s.until = time.Time{}
	if split {
		s.until = now.Add(splitRetry)
	}
	return was != split
}

// createdUIDs adds the UIDs of noted sandboxes to set.
func (s *listSplit) createdUIDs(set map[types.UID]struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uid := range s.created {
		set[uid] = struct{}{}
	}
}

// uids adds the pod UIDs of the cache's entries to set.
func (c *listCache) uids(set map[types.UID]struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range []map[string]*listedEntry{c.sandboxes, c.containers} {
		for _, e := range m {
			set[e.pod.uid] = struct{}{}
		}
	}
}

// tooLarge reports whether err is gRPC's answer to a message over its
// size limit (the client's receive limit or the runtime's send limit).
func tooLarge(err error) bool {
	return status.Code(err) == codes.ResourceExhausted
}

// listFull lists every object matching the filters in two calls.
func (m *Manager) listFull(ctx context.Context, sbFilter *runtimeapi.PodSandboxFilter, ctFilter *runtimeapi.ContainerFilter) ([]*runtimeapi.PodSandbox, []*runtimeapi.Container, error) {
	sandboxes, err := m.rs.ListPodSandbox(ctx, sbFilter)
	if err != nil {
		return nil, nil, fmt.Errorf("list pod sandboxes: %w", err)
	}
	containers, err := m.rs.ListContainers(ctx, ctFilter)
	if err != nil {
		return nil, nil, fmt.Errorf("list containers: %w", err)
	}
	return sandboxes, containers, nil
}

// listSplitByPod lists the objects matching the filters pod by pod, for
// when a full listing is too large for one gRPC message. The pods are those
// an unfiltered ListContainers names when it fits, those either list cache
// holds from earlier listings, and those whose sandbox this manager ran
// since the last full listing; a pod of an earlier agent that has only
// sandboxes and was never listed is missed until a full listing fits.
func (m *Manager) listSplitByPod(ctx context.Context, sbFilter *runtimeapi.PodSandboxFilter, ctFilter *runtimeapi.ContainerFilter) ([]*runtimeapi.PodSandbox, []*runtimeapi.Container, error) {
	uids := map[types.UID]struct{}{}
	containers, err := m.rs.ListContainers(ctx, ctFilter)
	switch {
	case err == nil:
		for _, c := range containers {
			uids[podUIDOf(c.GetLabels())] = struct{}{}
		}
	case tooLarge(err):
		containers = nil
	default:
		return nil, nil, fmt.Errorf("list containers: %w", err)
	}
	fullContainers := err == nil
	m.lists.all.uids(uids)
	m.lists.running.uids(uids)
	m.split.createdUIDs(uids)
	var sandboxes []*runtimeapi.PodSandbox
	for uid := range uids {
		if uid == "" {
			continue
		}
		sel := m.ownLabels(noderuntime.LabelPodUID, string(uid))
		sbs, err := m.rs.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel, State: sbFilter.GetState()})
		if err != nil {
			return nil, nil, fmt.Errorf("list pod sandboxes of pod %s: %w", uid, err)
		}
		sandboxes = append(sandboxes, sbs...)
		if fullContainers {
			continue
		}
		cts, err := m.rs.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel, State: ctFilter.GetState()})
		if err != nil {
			return nil, nil, fmt.Errorf("list containers of pod %s: %w", uid, err)
		}
		containers = append(containers, cts...)
	}
	return sandboxes, containers, nil
}

// list is GetPods' listing: in two calls while they fit in a gRPC message,
// else pod by pod (listSplitByPod), trying two calls again every
// splitRetry. It logs when it starts and stops listing pod by pod.
func (m *Manager) list(ctx context.Context, all bool, sbFilter *runtimeapi.PodSandboxFilter, ctFilter *runtimeapi.ContainerFilter) ([]*runtimeapi.PodSandbox, []*runtimeapi.Container, error) {
	seq, split := m.split.begin(all, m.clk.Now())
	if !split {
		sandboxes, containers, err := m.listFull(ctx, sbFilter, ctFilter)
		if err == nil {
			if m.split.setSplit(false, m.clk.Now()) {
				m.log.Info("runtime listings fit in one message again", "all", all)
			}
			m.split.ended(all, seq)
			return sandboxes, containers, nil
		}
		if !tooLarge(err) {
			return nil, nil, err
		}
		if m.split.setSplit(true, m.clk.Now()) {
			m.log.Info("runtime listing too large for one message, listing pod by pod", "err", err.Error(), "retryAfter", splitRetry)
		}
	}
	sandboxes, containers, err := m.listSplitByPod(ctx, sbFilter, ctFilter)
	if err != nil {
		return nil, nil, fmt.Errorf("list pod by pod after a listing overflowed: %w", err)
	}
	m.split.ended(all, seq)
	return sandboxes, containers, nil
}
