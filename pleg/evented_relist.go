package pleg

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// relistReason says why the evented PLEG relists; it labels the relist
// counter.
type relistReason string

const (
	reasonInitial   relistReason = "initial"   // Run started
	reasonResync    relistReason = "resync"    // the stream (re)opened
	reasonReconcile relistReason = "reconcile" // ReconcilePeriod passed
	reasonWaiters   relistReason = "waiters"   // pod workers wait on the cache
	reasonFallback  relistReason = "fallback"  // the stream is down
	reasonManual    relistReason = "manual"    // Relist was called
)

// tombTTL is how long the PLEG remembers a removed object's ID.
const tombTTL = 10 * time.Minute

// relist lists the runtime, inspects every pod whose objects differ from
// what the PLEG knows (and pods whose last inspection failed), drops the
// pods that vanished, and then advances the cache's global timestamp to the
// time taken before the list, as Generic does: a pod not inspected did not
// change since then. While the stream was open since before the previous
// relist, each difference is a suspect: the stream should have reported it,
// and it counts as missed unless its event arrives within missedGrace.
func (e *Evented) relist(ctx context.Context, reason relistReason) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t0 := e.clk.Now()
	countable := e.countable(reason)
	pods, err := e.rt.GetPods(ctx, true)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Error(err, "Unable to list pods; skipping relist", "reason", reason)
			e.healthMu.Lock()
			e.failures.fail(err)
			e.healthMu.Unlock()
		}
		return
	}
	e.healthMu.Lock()
	e.failures.reset()
	e.healthMu.Unlock()
	if !e.prevRelist.IsZero() {
		e.metrics.relistInterval.Observe(t0.Sub(e.prevRelist).Seconds())
	}
	e.em.relists.WithLabelValues(string(reason)).Inc()
	seen := make(map[types.UID]bool, len(pods))
	for _, pod := range pods {
		if ctx.Err() != nil {
			return
		}
		if seen[pod.ID] {
			continue
		}
		seen[pod.ID] = true
		ps := e.pods[pod.ID]
		if e.differs(ps, pod, countable, t0) || (ps != nil && ps.reinspect) {
			e.inspect(ctx, pod.ID, pod.Name, pod.Namespace)
		}
	}
	e.forgetVanished(seen, countable, t0)
	e.cache.UpdateTime(t0)
	e.prevRelist = t0
	e.healthMu.Lock()
	e.lastRelist = t0
	e.healthMu.Unlock()
	e.observeRelistEnd(t0, pods)
	e.sweepSuspects(t0)
	for id, at := range e.tombs {
		if t0.Sub(at) > tombTTL {
			delete(e.tombs, id)
		}
	}
	if v := e.log.V(6); v.Enabled() {
		v.Info("Relisted", "reason", reason, "pods", len(seen))
	}
}

// forgetVanished drops the pods the relist did not list: the runtime no
// longer has anything of them, so the cache reports an empty status, as
// Generic does.
func (e *Evented) forgetVanished(seen map[types.UID]bool, countable bool, now time.Time) {
	for uid, ps := range e.pods {
		if seen[uid] {
			continue
		}
		if countable {
			for id := range ps.objs {
				e.addSuspect(id, rankRemoved, now)
			}
		}
		e.log.V(4).Info("Deleting status of vanished pod", "podUID", uid)
		e.cache.Delete(uid)
		e.observe(uid, nil)
	}
}

// countable reports whether what a relist for reason finds unreported
// counts against the stream: only while events drive the cache and the
// stream was open since before the previous relist began (so any change
// since then happened while it was open).
func (e *Evented) countable(reason relistReason) bool {
	switch reason {
	case reasonReconcile, reasonWaiters, reasonManual:
	default:
		return false
	}
	e.healthMu.Lock()
	since, mode := e.connectedSince, e.mode
	e.healthMu.Unlock()
	return mode == ModeEvents && !since.IsZero() && !e.prevRelist.IsZero() && !since.After(e.prevRelist)
}

// differs reports whether the listed pod shows an object in a later state
// than the PLEG knows, or lacks one it knows; with countable set, each such
// object becomes a suspect.
func (e *Evented) differs(ps *podState, pod *noderuntime.Pod, countable bool, now time.Time) bool {
	changed := false
	listed := objectsOfPod(pod)
	for id, s := range listed {
		old := stateNonExistent
		if ps != nil {
			if o, ok := ps.objs[id]; ok {
				old = o
			}
		}
		if rank(s) > rank(old) {
			changed = true
			if countable {
				e.addSuspect(id, rank(s), now)
			}
		}
	}
	if ps == nil {
		return true
	}
	for id := range ps.objs {
		if _, ok := listed[id]; !ok {
			changed = true
			if countable {
				e.addSuspect(id, rankRemoved, now)
			}
		}
	}
	return changed
}

// observeRelistEnd records a completed relist in the generic PLEG's metrics.
func (e *Evented) observeRelistEnd(start time.Time, pods []*noderuntime.Pod) {
	e.metrics.relistDuration.Observe(e.clk.Since(start).Seconds())
	e.metrics.lastSeen.Set(float64(start.Unix()))
	running := 0
	for _, p := range pods {
		for _, s := range p.Sandboxes {
			if s.State == noderuntime.ContainerStateRunning {
				running++
				break
			}
		}
	}
	e.metrics.runningPods.Set(float64(running))
}
