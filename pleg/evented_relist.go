package pleg

import (
	"context"
	"time"

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
	e.em.relists.WithLabelValues(string(reason)).Inc()
	e.relisting = true
	defer func() { e.relisting = false }()
	completed := e.rl.run(ctx, func(pod *noderuntime.Pod) {
		ps := e.pods[pod.ID]
		if e.differs(ps, pod, countable, t0) || (ps != nil && ps.reinspect) {
			e.inspect(ctx, pod.ID, pod.Name, pod.Namespace)
		}
	}, func() { e.forgetVanished(countable, t0) })
	if !completed {
		return
	}
	e.sweepSuspects(t0)
	for id, at := range e.tombs {
		if t0.Sub(at) > tombTTL {
			delete(e.tombs, id)
		}
	}
}

// forgetVanished drops the pods the relist did not list: the runtime no
// longer has anything of them, so the cache reports an empty status, as
// Generic does.
func (e *Evented) forgetVanished(countable bool, now time.Time) {
	for uid, ps := range e.pods {
		if e.rl.listed(uid) {
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
	prev := e.rl.prev
	return mode == ModeEvents && !since.IsZero() && !prev.IsZero() && !since.After(prev)
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
