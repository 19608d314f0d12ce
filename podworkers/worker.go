package podworkers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/internal/podannotations"
)

// worker is the bookkeeping of one pod UID: its one-way state machine and
// the update waiting for its goroutine. Every field is guarded by
// PodWorkers.mu, except wake, which is safe by itself.
type worker struct {
	uid types.UID
	// wake (capacity 1) tells the goroutine that pending is set, or that the
	// worker was removed.
	wake chan struct{}
	// hasGoroutine is true from the moment a goroutine is requested for the
	// worker until that goroutine exits.
	hasGoroutine bool

	// pending is the newest update not yet taken by the goroutine; updates
	// arriving while a sync runs replace it.
	pending *UpdatePodOptions
	// active is what the last sync was given: the newest Pod and MirrorPod
	// seen (kept when a later update lacks them). nil until the first sync
	// starts.
	active *UpdatePodOptions
	// cancel cancels the sync in progress; nil when none runs.
	cancel context.CancelFunc

	// terminatingAt is when termination was requested; terminatedAt when
	// SyncTerminatingPod (or SyncTerminatingRuntimePod) succeeded.
	terminatingAt, terminatedAt time.Time
	// gracePeriod is the effective grace period in seconds once termination
	// was requested; it only decreases.
	gracePeriod int64
	// notify are the CompletedCh channels to close once terminated.
	notify []chan<- struct{}
	// statusFns are the kill requests' status functions; the newest is
	// passed to SyncTerminatingPod.
	statusFns []func(*corev1.PodStatus)

	// deleted: the pod has a deletion timestamp, is runtime-only or was
	// orphaned. evicted: a kill asked for an eviction.
	deleted, evicted bool
	// observedRuntime: a runtime-only update was seen for the UID, so it has
	// containers to stop even if it never synced.
	observedRuntime bool
	// restartRequested: a SyncPodCreate arrived while terminating; once
	// finished, SyncKnownPods forgets the worker so the pod can start anew.
	restartRequested bool
	// finished: SyncTerminatedPod succeeded (or the runtime-only pod is
	// stopped); the goroutine has exited and later updates are ignored.
	finished bool
	// removed: the worker was forgotten; its goroutine must exit.
	removed bool
}

func newWorker(uid types.UID) *worker {
	return &worker{uid: uid, wake: make(chan struct{}, 1)}
}

func (w *worker) terminationRequested() bool { return !w.terminatingAt.IsZero() }
func (w *worker) terminated() bool           { return !w.terminatedAt.IsZero() }

// state is where the worker is in its state machine.
func (w *worker) state() PodWorkerState {
	switch {
	case w.terminated():
		return TerminatedPod
	case w.terminationRequested():
		return TerminatingPod
	}
	return SyncPod
}

// lastPod is the newest pod spec the worker has seen; nil for a
// runtime-only pod.
func (w *worker) lastPod() *corev1.Pod {
	if w.pending != nil && w.pending.Pod != nil {
		return w.pending.Pod
	}
	if w.active != nil {
		return w.active.Pod
	}
	return nil
}

// signal wakes the goroutine without blocking.
func (w *worker) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// requeueLast makes the last synced update pending again, unless another
// update already is, so that the goroutine runs the next state's sync.
func (w *worker) requeueLast() {
	if w.pending == nil && w.active != nil {
		again := *w.active
		w.pending = &again
	}
	if w.pending != nil {
		w.signal()
	}
}

// cancelSync cancels the sync in progress, if any.
func (w *worker) cancelSync() {
	if w.cancel != nil {
		w.cancel()
	}
}

// notifyTerminated closes every CompletedCh waiting for the termination.
func (w *worker) notifyTerminated() {
	for _, ch := range w.notify {
		close(ch)
	}
	w.notify, w.statusFns = nil, nil
}

// isStatic reports whether pod came from a static source (a manifest file
// or URL) rather than the API server.
func isStatic(pod *corev1.Pod) bool {
	src, ok := pod.Annotations[podannotations.Source]
	return ok && src != podannotations.APIServerSource
}
