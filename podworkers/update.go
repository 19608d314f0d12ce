package podworkers

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// errNoPod is logged for an update that names no pod.
var errNoPod = errors.New("update has neither Pod nor RunningPod")

// UpdatePod records a change to a pod and wakes its worker; it never blocks
// on a sync and is safe for concurrent use. The worker keeps opts.Pod and
// opts.MirrorPod: the caller must not mutate them afterwards.
//
// An update that arrives while the pod's sync runs replaces the one waiting
// (keeping the newest spec, the last mirror pod, and SyncPodCreate over a
// later non-kill type); termination, once requested, is never undone. A
// runtime-only update (RunningPod without Pod) is always a kill. A kill or a
// deletion that arrives during a SyncPod, and a kill that shortens the grace
// period during a SyncTerminatingPod, cancel that sync's context so the
// worker moves on at once.
//
// Once a pod is terminating, a SyncPodCreate for its UID is ignored but
// remembered as a restart request: when the pod has finished,
// SyncKnownPods forgets it and the next SyncPodCreate starts it as a fresh
// worker. Any other update of a finished pod is ignored (its CompletedCh is
// closed at once), as is a runtime-only kill of a terminated pod.
func (p *PodWorkers) UpdatePod(opts UpdatePodOptions) {
	uid, ref := updateRef(opts)
	if uid == "" {
		p.log.Error(errNoPod, "Ignoring pod update", "updateType", opts.UpdateType)
		return
	}
	fromRuntime := opts.Pod == nil
	if fromRuntime {
		opts.UpdateType = SyncPodKill
	} else {
		opts.RunningPod = nil
	}
	kill := opts.KillPodOptions
	opts.KillPodOptions = nil

	p.mu.Lock()
	defer p.mu.Unlock()
	w, known := p.workers[uid]
	if !known {
		w = newWorker(uid)
		p.workers[uid] = w
		p.log.V(4).Info("New pod worker", "pod", ref, "podUID", uid)
	}
	if fromRuntime {
		// The pod is gone from config: its content may go once stopped.
		w.observedRuntime, w.deleted = true, true
		// A spec already seen wins over the runtime's minimal view.
		if pod := w.lastPod(); pod != nil {
			opts.Pod, opts.RunningPod = pod, nil
		}
	}
	if p.ignoreLocked(w, known, fromRuntime, opts, kill) {
		return
	}
	becameTerminating := p.requestTerminationLocked(w, opts, kill)
	shortened := p.acceptKillLocked(w, opts.Pod, kill)
	p.setPendingLocked(w, opts)
	if becameTerminating || shortened {
		w.cancelSync()
	}
}

// ignoreLocked handles the updates a worker does not act on and reports
// whether opts is one. p.mu must be held.
func (p *PodWorkers) ignoreLocked(w *worker, known, fromRuntime bool, opts UpdatePodOptions, kill *KillPodOptions) bool {
	switch {
	case known && w.terminationRequested() && opts.UpdateType == SyncPodCreate:
		if !w.restartRequested {
			p.log.V(2).Info("Pod restart requested while terminating", "podUID", w.uid)
		}
		w.restartRequested = true
	case w.finished, w.terminated() && fromRuntime:
		p.log.V(4).Info("Ignoring update of terminated pod", "podUID", w.uid, "updateType", opts.UpdateType)
	default:
		return false
	}
	if kill != nil && kill.CompletedCh != nil {
		if w.terminated() {
			close(kill.CompletedCh)
		} else {
			w.notify = append(w.notify, kill.CompletedCh)
		}
	}
	return true
}

// requestTerminationLocked records why opts terminates the pod, if it does,
// and reports whether termination was requested just now. p.mu must be
// held.
func (p *PodWorkers) requestTerminationLocked(w *worker, opts UpdatePodOptions, kill *KillPodOptions) bool {
	pod := opts.Pod
	if pod != nil && pod.DeletionTimestamp != nil {
		w.deleted = true
	}
	if opts.UpdateType == SyncPodKill && kill != nil && kill.Evict && !w.terminated() {
		w.evicted = true
	}
	if w.terminationRequested() {
		return false
	}
	var reason string
	switch {
	case pod == nil:
		reason = "runtimeOnly"
	case pod.DeletionTimestamp != nil:
		reason = "deleted"
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		reason = "terminalPhase"
	case opts.UpdateType == SyncPodKill && w.evicted:
		reason = "evicted"
	case opts.UpdateType == SyncPodKill:
		reason = "killed"
	default:
		return false
	}
	w.terminatingAt = p.clock.Now()
	p.log.V(2).Info("Pod termination requested", "podUID", w.uid, "reason", reason)
	return true
}

// acceptKillLocked applies kill to w's state: it queues the completion
// channel and status function of a terminating pod and lowers its grace
// period. It reports whether the grace period got shorter. p.mu must be
// held.
func (p *PodWorkers) acceptKillLocked(w *worker, pod *corev1.Pod, kill *KillPodOptions) bool {
	if !w.terminationRequested() || w.terminated() {
		// Kill options mean nothing outside terminating: release waiters.
		if kill != nil && kill.CompletedCh != nil {
			close(kill.CompletedCh)
		}
		return false
	}
	var override *int64
	if kill != nil {
		if kill.CompletedCh != nil {
			w.notify = append(w.notify, kill.CompletedCh)
		}
		if kill.PodStatusFunc != nil {
			w.statusFns = append(w.statusFns, kill.PodStatusFunc)
		}
		override = kill.PodTerminationGracePeriodSecondsOverride
	}
	g := effectiveGracePeriod(w.gracePeriod, pod, override)
	shortened := w.gracePeriod != 0 && g < w.gracePeriod
	if shortened {
		p.log.V(2).Info("Pod grace period shortened", "podUID", w.uid, "from", w.gracePeriod, "to", g)
	}
	w.gracePeriod = g
	return shortened
}

// setPendingLocked makes opts the worker's next update and makes sure a
// goroutine will take it. p.mu must be held.
func (p *PodWorkers) setPendingLocked(w *worker, opts UpdatePodOptions) {
	if prev := w.pending; prev != nil {
		if opts.MirrorPod == nil && opts.UpdateType == SyncPodKill {
			opts.MirrorPod = prev.MirrorPod
		}
		if prev.UpdateType == SyncPodCreate && opts.UpdateType != SyncPodKill {
			opts.UpdateType = SyncPodCreate
		}
	}
	w.pending = &opts
	w.signal()
	if w.hasGoroutine || (p.ran && !p.running) {
		return
	}
	w.hasGoroutine = true
	p.toStart = append(p.toStart, w)
	select {
	case p.startCh <- struct{}{}:
	default:
	}
}

// effectiveGracePeriod is the grace period, in seconds, of a pod being
// terminated: the API's DeletionGracePeriodSeconds when set, else the spec's
// TerminationGracePeriodSeconds (30 when unset or pod is nil); a kill
// override only shortens it; it never exceeds current (the worker's grace
// period so far, 0 for none) and is never below 1.
func effectiveGracePeriod(current int64, pod *corev1.Pod, override *int64) int64 {
	g := DefaultTerminationGracePeriodSeconds
	switch {
	case pod == nil:
	case pod.DeletionGracePeriodSeconds != nil:
		g = *pod.DeletionGracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		g = *pod.Spec.TerminationGracePeriodSeconds
	}
	if override != nil && *override < g {
		g = *override
	}
	if current > 0 && current < g {
		g = current
	}
	return max(g, 1)
}

// updateRef names the pod of an update for logs; uid is empty when the
// update names no pod.
func updateRef(opts UpdatePodOptions) (types.UID, klog.ObjectRef) {
	switch {
	case opts.Pod != nil:
		return opts.Pod.UID, klog.KObj(opts.Pod)
	case opts.RunningPod != nil:
		return opts.RunningPod.ID, klog.KRef(opts.RunningPod.Namespace, opts.RunningPod.Name)
	}
	return "", klog.ObjectRef{}
}
