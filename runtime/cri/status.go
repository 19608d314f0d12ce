package cri

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	crierrors "k8s.io/cri-api/pkg/errors"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// GetPods lists this instance's sandboxes and containers grouped by the pod
// UID label; with all false only ready sandboxes and running containers are
// listed. Pods are ordered newest first, and so are each pod's sandboxes and
// containers. The caller owns the result: every call returns new Pod and
// Container structs. Objects listed unchanged since the previous call of the
// same mode are not decoded again (see listCache). When the runtime's
// answer is too large for one gRPC message (codes.ResourceExhausted), the
// objects are listed pod by pod instead (see listSplitByPod). It is safe for
// concurrent use.
func (m *Manager) GetPods(ctx context.Context, all bool) ([]*noderuntime.Pod, error) {
	sbFilter := &runtimeapi.PodSandboxFilter{LabelSelector: m.ownLabels()}
	ctFilter := &runtimeapi.ContainerFilter{LabelSelector: m.ownLabels()}
	if !all {
		sbFilter.State = &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}
		ctFilter.State = &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}
	}
	sandboxes, containers, err := m.list(ctx, all, sbFilter, ctFilter)
	if err != nil {
		return nil, err
	}
	return m.lists.of(all).group(sandboxes, containers, m.Type()).sorted(), nil
}

// group collects one GetPods answer from listed objects of a runtime of type
// typ, decoding only the objects the cache does not hold unchanged. It
// holds the cache's lock while it runs.
func (c *listCache) group(sandboxes []*runtimeapi.PodSandbox, containers []*runtimeapi.Container, typ string) *podGrouper {
	g := newPodGrouper(len(sandboxes), len(containers))
	c.begin()
	defer c.end()
	for _, s := range sandboxes {
		g.add(c.lookup(c.sandboxes, s.GetId(), sandboxKey(s, typ), func() *listedEntry { return sandboxEntry(s, typ) }), true)
	}
	for _, ct := range containers {
		g.add(c.lookup(c.containers, ct.GetId(), containerKey(ct, typ), func() *listedEntry { return containerEntry(ct, typ) }), false)
	}
	g.fill()
	return g
}

// podGrouper collects one GetPods answer: the pods by UID, each with its
// newest object's creation time. It works in two passes so that a call
// allocates a fixed number of slices whatever the number of pods: add
// finds each listed object's pod and counts the pod's sandboxes and
// containers, then fill cuts every pod's Sandboxes and Containers slices
// from one slab of pointers and copies the objects into them. The Pod and
// Container structs come from slabs too. Each struct is the caller's own,
// and each pod's slices have a capacity of exactly their length, so a
// caller appending to one pod's slice gets a new array and never writes
// over another pod's entries.
type podGrouper struct {
	byUID   map[types.UID]int
	entries []groupedPod
	// listed holds every listed object in list order, sandboxes first;
	// sandboxes is how many of them are sandboxes.
	listed    []groupedObject
	sandboxes int
	objs      []noderuntime.Container
}

// groupedPod is one pod of the answer, its newest object's creation time,
// and how many sandboxes and containers it has.
type groupedPod struct {
	pod                   noderuntime.Pod
	newest                int64
	sandboxes, containers int
}

// groupedObject is one listed object's cache entry and the index of its pod
// in podGrouper.entries.
type groupedObject struct {
	e   *listedEntry
	pod int
}

// newPodGrouper returns a grouper sized for an answer of the given numbers
// of listed sandboxes and containers; there are at most as many pods as
// sandboxes, more only when containers outlive their sandboxes.
func newPodGrouper(sandboxes, containers int) *podGrouper {
	return &podGrouper{
		byUID:   make(map[types.UID]int, sandboxes),
		entries: make([]groupedPod, 0, sandboxes),
		listed:  make([]groupedObject, 0, sandboxes+containers),
		objs:    make([]noderuntime.Container, 0, sandboxes+containers),
	}
}

// add records a listed object, a sandbox or a container, and counts it in
// its pod, adding the pod on first sight. Add all sandboxes before any
// container, then call fill once.
func (g *podGrouper) add(e *listedEntry, sandbox bool) {
	i, ok := g.byUID[e.pod.uid]
	if !ok {
		i = len(g.entries)
		g.byUID[e.pod.uid] = i
		g.entries = append(g.entries, groupedPod{pod: noderuntime.Pod{ID: e.pod.uid, Name: e.pod.name, Namespace: e.pod.namespace}})
	}
	p := &g.entries[i]
	p.newest = max(p.newest, e.key.createdAt)
	if sandbox {
		p.sandboxes++
		g.sandboxes++
	} else {
		p.containers++
	}
	g.listed = append(g.listed, groupedObject{e: e, pod: i})
}

// fill gives every pod its Sandboxes and Containers, in list order: slices
// cut from one slab of pointers, of capacity exactly their length (nil when
// empty), holding a copy of each added object.
func (g *podGrouper) fill() {
	slab := make([]*noderuntime.Container, len(g.listed))
	off := 0
	for i := range g.entries {
		p := &g.entries[i]
		p.pod.Sandboxes, off = cut(slab, off, p.sandboxes)
		p.pod.Containers, off = cut(slab, off, p.containers)
	}
	for _, o := range g.listed[:g.sandboxes] {
		p := &g.entries[o.pod].pod
		p.Sandboxes = append(p.Sandboxes, g.copyOf(o.e))
	}
	for _, o := range g.listed[g.sandboxes:] {
		p := &g.entries[o.pod].pod
		p.Containers = append(p.Containers, g.copyOf(o.e))
	}
}

// cut returns an empty slice of slab at off with a capacity of n (nil when
// n is 0), so appending n pointers fills it in place and one more moves it
// to a new array, and the offset after it.
func cut(slab []*noderuntime.Container, off, n int) ([]*noderuntime.Container, int) {
	if n == 0 {
		return nil, off
	}
	return slab[off : off : off+n], off + n
}

// copyOf returns a new copy of the entry's object: in the grouper's slab
// while it has room, else in a struct of its own.
func (g *podGrouper) copyOf(e *listedEntry) *noderuntime.Container {
	if len(g.objs) == cap(g.objs) {
		return new(e.c)
	}
	g.objs = append(g.objs, e.c)
	return &g.objs[len(g.objs)-1]
}

// sorted returns the pods newest first (ties by UID), each pod's sandboxes
// and containers newest first.
func (g *podGrouper) sorted() []*noderuntime.Pod {
	slices.SortStableFunc(g.entries, func(a, b groupedPod) int {
		if a.newest != b.newest {
			return cmp.Compare(b.newest, a.newest)
		}
		return cmp.Compare(a.pod.ID, b.pod.ID)
	})
	out := make([]*noderuntime.Pod, len(g.entries))
	for i := range g.entries {
		p := &g.entries[i].pod
		sortNewestFirst(p.Sandboxes)
		sortNewestFirst(p.Containers)
		out[i] = p
	}
	return out
}

// GetPodStatus inspects every sandbox and container of this instance that
// carries the pod's UID, newest first, rebuilding hashes and restart counts
// from annotations. A pod the runtime does not know gets an empty status.
// Objects removed between the list and the inspection are skipped.
func (m *Manager) GetPodStatus(ctx context.Context, uid types.UID, name, namespace string) (*noderuntime.PodStatus, error) {
	status := &noderuntime.PodStatus{ID: uid, Name: name, Namespace: namespace, TimeStamp: m.clk.Now()}
	sel := m.ownLabels(noderuntime.LabelPodUID, string(uid))
	sandboxes, err := m.rs.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list sandboxes of pod %s: %w", podFullName(name, namespace, uid), err)
	}
	sort.SliceStable(sandboxes, func(i, j int) bool { return sandboxes[i].GetCreatedAt() > sandboxes[j].GetCreatedAt() })
	for _, s := range sandboxes {
		resp, err := m.rs.PodSandboxStatus(ctx, s.GetId(), false)
		if crierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("status of sandbox %s of pod %s: %w", s.GetId(), podFullName(name, namespace, uid), err)
		}
		if resp.GetStatus() == nil {
			return nil, fmt.Errorf("status of sandbox %s of pod %s: runtime returned no status", s.GetId(), podFullName(name, namespace, uid))
		}
		if len(status.SandboxStatuses) == 0 && resp.GetStatus().GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			status.IPs = sandboxIPs(resp.GetStatus())
		}
		status.SandboxStatuses = append(status.SandboxStatuses, resp.GetStatus())
	}
	containers, err := m.rs.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list containers of pod %s: %w", podFullName(name, namespace, uid), err)
	}
	for _, c := range containers {
		resp, err := m.rs.ContainerStatus(ctx, c.GetId(), false)
		if crierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("status of container %s of pod %s: %w", c.GetId(), podFullName(name, namespace, uid), err)
		}
		if resp.GetStatus() == nil {
			return nil, fmt.Errorf("status of container %s of pod %s: runtime returned no status", c.GetId(), podFullName(name, namespace, uid))
		}
		status.ContainerStatuses = append(status.ContainerStatuses, m.toContainerStatus(c, resp.GetStatus()))
	}
	slices.SortStableFunc(status.ContainerStatuses, newerStatusFirst)
	return status, nil
}

// newerStatusFirst orders container statuses newest first, as the
// runtime.Runtime contract promises: by creation time, and between two
// copies created in the same instant (a coarse or fake clock) by restart
// count, so the next sync never reuses an attempt number.
func newerStatusFirst(a, b *noderuntime.ContainerStatus) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(b.RestartCount, a.RestartCount)
}

// sandboxIPs returns the sandbox's primary and additional addresses.
func sandboxIPs(s *runtimeapi.PodSandboxStatus) []string {
	var ips []string
	if ip := s.GetNetwork().GetIp(); ip != "" {
		ips = append(ips, ip)
	}
	for _, extra := range s.GetNetwork().GetAdditionalIps() {
		if extra.GetIp() != "" {
			ips = append(ips, extra.GetIp())
		}
	}
	return ips
}

// toContainerStatus merges a listed container (which knows its sandbox) with
// its inspected status. An exited container's message gets the termination
// message it left.
func (m *Manager) toContainerStatus(listed *runtimeapi.Container, s *runtimeapi.ContainerStatus) *noderuntime.ContainerStatus {
	name := s.GetMetadata().GetName()
	if name == "" {
		name = s.GetLabels()[noderuntime.LabelContainerName]
	}
	imageID := s.GetImageId()
	if imageID == "" {
		imageID = s.GetImageRef()
	}
	message := s.GetMessage()
	if s.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
		if tm := m.containerTerminationMessage(s); tm != "" {
			if message != "" {
				message += ": "
			}
			message += tm
		}
	}
	return &noderuntime.ContainerStatus{
		ID:           m.containerID(s.GetId()),
		Name:         name,
		State:        toState(s.GetState()),
		CreatedAt:    fromNanos(s.GetCreatedAt()),
		StartedAt:    fromNanos(s.GetStartedAt()),
		FinishedAt:   fromNanos(s.GetFinishedAt()),
		ExitCode:     int(s.GetExitCode()),
		Image:        imageName(s.GetImage()),
		ImageID:      imageID,
		ImageRef:     s.GetImageRef(),
		Hash:         parseHash(s.GetAnnotations()),
		RestartCount: parseRestartCount(s.GetAnnotations()),
		Reason:       s.GetReason(),
		Message:      message,
		SandboxID:    listed.GetPodSandboxId(),
	}
}

// containerEntry decodes a ListContainers entry for the list cache.
func containerEntry(c *runtimeapi.Container, typ string) *listedEntry {
	return &listedEntry{pod: podRefOf(c.GetLabels()), c: *listedToContainer(c, typ)}
}

// sandboxEntry decodes a ListPodSandbox entry for the list cache.
func sandboxEntry(s *runtimeapi.PodSandbox, typ string) *listedEntry {
	return &listedEntry{pod: podRefOf(s.GetLabels()), c: *sandboxToContainer(s, typ)}
}

// listedToContainer converts a ListContainers entry of a runtime of type typ.
func listedToContainer(c *runtimeapi.Container, typ string) *noderuntime.Container {
	return &noderuntime.Container{
		ID:        noderuntime.ContainerID{Type: typ, ID: c.GetId()},
		Name:      c.GetMetadata().GetName(),
		Image:     imageName(c.GetImage()),
		ImageID:   c.GetImageRef(),
		Hash:      parseHash(c.GetAnnotations()),
		State:     toState(c.GetState()),
		CreatedAt: fromNanos(c.GetCreatedAt()),
	}
}

// sandboxToContainer converts a ListPodSandbox entry of a runtime of type
// typ; a ready sandbox counts as running.
func sandboxToContainer(s *runtimeapi.PodSandbox, typ string) *noderuntime.Container {
	state := noderuntime.ContainerStateExited
	if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
		state = noderuntime.ContainerStateRunning
	}
	return &noderuntime.Container{ID: noderuntime.ContainerID{Type: typ, ID: s.GetId()}, State: state, CreatedAt: fromNanos(s.GetCreatedAt())}
}

// imageName prefers the image name the user wrote over the resolved ID.
func imageName(spec *runtimeapi.ImageSpec) string {
	if u := spec.GetUserSpecifiedImage(); u != "" {
		return u
	}
	return spec.GetImage()
}

func toState(s runtimeapi.ContainerState) noderuntime.ContainerState {
	switch s {
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		return noderuntime.ContainerStateCreated
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return noderuntime.ContainerStateRunning
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return noderuntime.ContainerStateExited
	default:
		return noderuntime.ContainerStateUnknown
	}
}

// fromNanos converts a CRI timestamp; 0 stays the zero time.
func fromNanos(ns int64) time.Time {
	if ns <= 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func sortNewestFirst(cs []*noderuntime.Container) {
	if len(cs) < 2 {
		return
	}
	slices.SortStableFunc(cs, func(a, b *noderuntime.Container) int { return b.CreatedAt.Compare(a.CreatedAt) })
}
