package pleg

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Ranks order the states a container or sandbox goes through: an
// observation never moves an object to a lower rank, since the runtime never
// does (a restart is a new container).
const (
	rankNone    = 0 // never seen
	rankCreated = 1 // created or unknown
	rankRunning = 2 // running, or a ready sandbox
	rankExited  = 3 // exited, or a sandbox not ready
	rankRemoved = 4 // gone
)

func rank(s containerState) int {
	switch s {
	case stateRunning:
		return rankRunning
	case stateExited:
		return rankExited
	case stateUnknown:
		return rankCreated
	default:
		return rankNone
	}
}

// eventRank is the rank an event says its object reached.
func eventRank(t runtimeapi.ContainerEventType) int {
	switch t {
	case runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT:
		return rankCreated
	case runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT:
		return rankRunning
	case runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT:
		return rankExited
	default:
		return rankRemoved
	}
}

// podState is what the evented PLEG last told the agent about a pod: the
// state of each of its containers and sandboxes, by ID.
type podState struct {
	name, namespace string
	objs            map[string]containerState
	// reinspect is set when the last inspection failed.
	reinspect bool
}

// suspect is a change a relist found before any event reported it.
type suspect struct {
	rank int
	at   time.Time
}

// missedGrace is how long an event may lag behind the relist that found
// its change before the change counts as missed.
const missedGrace = 10 * time.Second

// handle applies one container event. With a decoder the event's own pod
// status goes into the cache; without one, or when the event cannot be
// read, the pod is inspected.
func (e *Evented) handle(ctx context.Context, ev *runtimeapi.ContainerEventResponse) {
	e.received.Add(1)
	e.em.received.Inc()
	e.mu.Lock()
	defer e.mu.Unlock()
	id := ev.GetContainerId()
	if s, ok := e.suspects[id]; ok && eventRank(ev.GetContainerEventType()) >= s.rank {
		delete(e.suspects, id)
	}
	now := e.clk.Now()
	applied := false
	var snap *noderuntime.PodStatus
	if e.dec != nil {
		snap, applied = e.dec.PodStatusFromEvent(ev)
	}
	deleted := ev.GetContainerEventType() == runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT
	switch {
	case applied && deleted:
		e.applyRemoval(ctx, snap.ID, id)
	case applied:
		e.applySnapshot(ctx, ev, snap, now)
	default:
		applied = e.handleUndecoded(ctx, ev, deleted)
	}
	if applied {
		if at := fromNanos(ev.GetCreatedAt()); !at.IsZero() {
			e.em.latency.Observe(max(e.clk.Since(at), 0).Seconds())
		}
	}
	if len(e.suspects) > 0 {
		e.sweepSuspects(now)
	}
}

// handleUndecoded handles an event the decoder could not read (or every
// event, without a decoder): the pod is found by the event's sandbox or by
// the object's ID, and inspected (or, for a deletion, the object is
// dropped). It reports whether the event was about a pod of this agent.
func (e *Evented) handleUndecoded(ctx context.Context, ev *runtimeapi.ContainerEventResponse, deleted bool) bool {
	id := ev.GetContainerId()
	uid := e.ownerOf(id)
	md := ev.GetPodSandboxStatus().GetMetadata()
	if uid == "" && e.dec == nil && md.GetUid() != "" {
		uid = types.UID(md.GetUid())
	}
	if uid == "" {
		// Another client's container, or one this PLEG never saw: a relist
		// would find it if it were ours.
		e.log.V(5).Info("Ignoring container event", "containerID", id, "event", ev.GetContainerEventType())
		return false
	}
	if deleted && e.pods[uid] != nil {
		e.applyRemoval(ctx, uid, id)
		return true
	}
	return e.inspect(ctx, uid, md.GetName(), md.GetNamespace())
}

// ownerOf returns the pod that has the container or sandbox id, or "".
func (e *Evented) ownerOf(id string) types.UID {
	for uid, ps := range e.pods {
		if _, ok := ps.objs[id]; ok {
			return uid
		}
	}
	return ""
}

// applySnapshot merges the status an event shows into the pod's cached
// status and stores it, stamped with the time of the event's change (a time
// the event's snapshot is known to be newer than; see changeTime), or with
// the entry's own time when that is unknown. A late event, older than the
// entry, is dropped, unless it shows something the cache does not know:
// then the pod is inspected.
func (e *Evented) applySnapshot(ctx context.Context, ev *runtimeapi.ContainerEventResponse, snap *noderuntime.PodStatus, now time.Time) {
	uid := snap.ID
	base, baseAt, baseErr := e.cache.Entry(uid)
	if baseErr != nil {
		// The entry holds a failed inspection, not the pod: inspect again.
		e.inspect(ctx, uid, snap.Name, snap.Namespace)
		return
	}
	asOf := changeTime(ev, snap)
	if !asOf.IsZero() {
		if at := fromNanos(ev.GetCreatedAt()); !at.IsZero() && at.Before(asOf) {
			asOf = at
		}
		if asOf.After(now) {
			asOf = now
		}
	}
	merged, othersLive := mergeSnapshot(base, snap)
	stamp := asOf
	if stamp.IsZero() || othersLive {
		// Nothing vouches for the rest of the pod after its entry's time.
		stamp = baseAt
	}
	if stamp.Before(baseAt) {
		if e.hasNews(uid, snap) {
			e.log.V(4).Info("Late event shows news; inspecting pod", "podUID", uid, "containerID", ev.GetContainerId())
			e.inspect(ctx, uid, snap.Name, snap.Namespace)
		}
		return
	}
	if e.cache.Set(uid, merged, nil, stamp) {
		e.observe(uid, merged)
	}
}

// applyRemoval drops the removed container or sandbox id (a sandbox with
// its containers) from the pod's cached status, without advancing the
// entry's time; a pod left with nothing loses its entry.
func (e *Evented) applyRemoval(ctx context.Context, uid types.UID, id string) {
	base, at, err := e.cache.Entry(uid)
	if err != nil {
		e.inspect(ctx, uid, "", "")
		return
	}
	patched := withoutObject(base, id)
	if len(patched.SandboxStatuses) == 0 && len(patched.ContainerStatuses) == 0 {
		e.cache.Delete(uid)
		e.observe(uid, nil)
		return
	}
	if e.cache.Set(uid, patched, nil, at) {
		e.observe(uid, patched)
	}
}

// inspect reads the pod's status from the runtime and stores it, or the
// error, stamped with the time taken just before the call, then sends the
// pod's events. name and namespace are used when the PLEG does not know
// the pod yet. A pod the PLEG does not know and the runtime shows empty (not
// ours, or gone) is left alone. It reports whether the pod is one of ours.
func (e *Evented) inspect(ctx context.Context, uid types.UID, name, namespace string) bool {
	ps := e.pods[uid]
	if ps != nil {
		name, namespace = ps.name, ps.namespace
	}
	stamp := e.clk.Now()
	e.inspections.Add(1)
	if !e.relisting {
		e.eventInspections.Add(1)
	}
	e.em.inspections.Inc()
	status, err := e.rt.GetPodStatus(ctx, uid, name, namespace)
	if err != nil {
		if ctx.Err() != nil || ps == nil {
			return ps != nil
		}
		err = fmt.Errorf("inspect pod %s/%s (%s): %w", namespace, name, uid, err)
		e.log.Error(err, "Unable to inspect pod; retrying on next relist", "pod", klog.KRef(namespace, name), "podUID", uid)
		e.cache.Set(uid, nil, err, stamp)
		ps.reinspect = true
		return true
	}
	if status == nil || (len(status.SandboxStatuses) == 0 && len(status.ContainerStatuses) == 0) {
		if ps == nil {
			return false
		}
		e.cache.Delete(uid)
		e.observe(uid, nil)
		return true
	}
	status.IPs = keepIPs(e.cache, uid, status)
	if e.cache.Set(uid, status, nil, stamp) {
		e.observe(uid, status)
	}
	return true
}

// observe records the pod's new status (nil: the pod is gone) and sends the
// events between what the PLEG told before and it, as Generic derives them.
// An object never moves back to a lower rank, and a removed one never comes
// back.
func (e *Evented) observe(uid types.UID, status *noderuntime.PodStatus) {
	ps := e.pods[uid]
	cur := objectsOf(status)
	if ps == nil {
		if len(cur) == 0 {
			return
		}
		ps = &podState{objs: map[string]containerState{}}
		e.pods[uid] = ps
	}
	if status != nil {
		ps.name, ps.namespace, ps.reinspect = status.Name, status.Namespace, false
	}
	now := e.clk.Now()
	events := e.buf[:0]
	for id, s := range cur {
		old, had := ps.objs[id]
		if !had {
			old = stateNonExistent
			if _, gone := e.tombs[id]; gone {
				delete(cur, id)
				continue
			}
		}
		if rank(s) < rank(old) {
			cur[id] = old
			continue
		}
		events = appendEvents(events, uid, id, old, s)
	}
	for id, old := range ps.objs {
		if _, ok := cur[id]; !ok {
			events = appendEvents(events, uid, id, old, stateNonExistent)
			e.tombs[id] = now
		}
	}
	ps.objs = cur
	if len(cur) == 0 {
		delete(e.pods, uid)
	}
	e.send(events)
	clear(events)
	e.buf = events[:0]
}

// hasNews reports whether the snapshot shows an object in a later state than
// the PLEG knows.
func (e *Evented) hasNews(uid types.UID, snap *noderuntime.PodStatus) bool {
	ps := e.pods[uid]
	for id, s := range objectsOf(snap) {
		if _, gone := e.tombs[id]; gone {
			continue
		}
		old := stateNonExistent
		if ps != nil {
			if o, ok := ps.objs[id]; ok {
				old = o
			}
		}
		if rank(s) > rank(old) {
			return true
		}
	}
	return false
}

// addSuspect records a change found by a relist, unless one is recorded.
func (e *Evented) addSuspect(id string, r int, now time.Time) {
	if _, ok := e.suspects[id]; !ok {
		e.suspects[id] = suspect{rank: r, at: now}
	}
}

// sweepSuspects counts as missed the changes no event reported within
// missedGrace of the relist that found them.
func (e *Evented) sweepSuspects(now time.Time) {
	for id, s := range e.suspects {
		if now.Sub(s.at) < missedGrace {
			continue
		}
		delete(e.suspects, id)
		n := e.missed.Add(1)
		e.em.missed.Inc()
		e.log.Info("A relist found a change the event stream did not report", "containerID", id, "rank", s.rank, "missed", n)
	}
}

// forgetSuspects drops the pending suspects: the stream failed, so their
// events may never come and nothing was missed by a healthy stream.
func (e *Evented) forgetSuspects() {
	e.mu.Lock()
	clear(e.suspects)
	e.mu.Unlock()
}
