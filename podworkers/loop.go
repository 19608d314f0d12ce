package podworkers

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// work is one sync, copied out of the worker under the lock.
type work struct {
	// state decides which SyncHandler method runs.
	state PodWorkerState
	// opts is the merged update: the newest Pod and MirrorPod.
	opts UpdatePodOptions
	// gracePeriod and statusFn are for SyncTerminatingPod.
	gracePeriod int64
	statusFn    func(*corev1.PodStatus)
}

// workerLoop is the goroutine of one pod: it takes the pending update, runs
// the sync of the worker's state, and records the outcome, until the pod
// has finished, the worker is forgotten or ctx ends.
func (p *PodWorkers) workerLoop(ctx context.Context, w *worker) {
	defer p.wg.Done()
	defer p.exited(w)
	// lastSync is when the previous sync returned: each sync waits for a
	// status observed after it, so it sees what the previous one did.
	var lastSync time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		}
		syncCtx, wk, ok, exit := p.takeWork(ctx, w)
		if exit {
			return
		}
		if !ok {
			continue
		}
		isTerminal, synced, err := p.runWork(syncCtx, w, wk, lastSync)
		if synced {
			lastSync = p.clock.Now()
		}
		if ctx.Err() != nil {
			return
		}
		if p.completeWork(w, wk, isTerminal, err) {
			return
		}
	}
}

// exited records that w's goroutine is gone.
func (p *PodWorkers) exited(w *worker) {
	p.mu.Lock()
	w.hasGoroutine = false
	w.cancelSync()
	w.cancel = nil
	hook := p.testHookExit
	p.mu.Unlock()
	p.log.V(4).Info("Pod worker goroutine exited", "podUID", w.uid)
	if hook != nil {
		hook(w.uid)
	}
}

// takeWork moves the pending update into active and returns the sync to
// run, with a context that is cancelled when the sync must stop early. ok is
// false when nothing is pending; exit is true when the worker was forgotten.
func (p *PodWorkers) takeWork(ctx context.Context, w *worker) (syncCtx context.Context, wk work, ok, exit bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.removed || w.finished {
		return nil, work{}, false, true
	}
	next := w.pending
	if next == nil {
		return nil, work{}, false, false
	}
	w.pending = nil
	if w.active == nil {
		w.active = &UpdatePodOptions{}
	}
	a := w.active
	if next.Pod != nil {
		a.Pod = next.Pod
	}
	a.RunningPod = next.RunningPod
	if next.UpdateType != SyncPodKill || next.MirrorPod != nil {
		// The newest update tells the current mirror pod, nil included (a
		// deleted mirror must be recreated); a kill does not know it.
		a.MirrorPod = next.MirrorPod
	}
	a.UpdateType = next.UpdateType
	wk = work{state: w.state(), opts: *a, gracePeriod: w.gracePeriod}
	if n := len(w.statusFns); n > 0 {
		wk.statusFn = w.statusFns[n-1]
	}
	syncCtx, w.cancel = context.WithCancel(ctx)
	return syncCtx, wk, true, false
}

// runWork waits for a fresh enough status, then calls the handler for the
// work's state. synced is false when no handler was called.
func (p *PodWorkers) runWork(ctx context.Context, w *worker, wk work, lastSync time.Time) (isTerminal, synced bool, err error) {
	o := wk.opts
	var status *noderuntime.PodStatus
	if o.RunningPod == nil {
		status, err = p.statusFor(ctx, w.uid, wk, lastSync)
		if err != nil {
			return false, false, err
		}
	}
	p.log.V(4).Info("Syncing pod", "podUID", w.uid, "workType", wk.state, "updateType", o.UpdateType)
	start := p.clock.Now()
	op := o.UpdateType.String()
	if wk.state != SyncPod {
		op = SyncPodKill.String()
	}
	defer func() { p.duration.WithLabelValues(op).Observe(p.clock.Since(start).Seconds()) }()
	defer func() {
		// A bug triggered by one pod's spec must not take down the agent
		// and every other pod: the panic becomes this pod's sync error and
		// is retried with backoff like any other.
		if r := recover(); r != nil {
			p.log.Error(fmt.Errorf("panic: %v", r), "Pod sync panicked", "podUID", w.uid, "stack", string(debug.Stack()))
			isTerminal, synced, err = false, true, fmt.Errorf("%s pod %s: panic: %v", wk.state, w.uid, r)
		}
	}()
	switch {
	case wk.state == TerminatedPod:
		err = p.handler.SyncTerminatedPod(ctx, o.Pod, status)
	case wk.state == TerminatingPod && o.RunningPod != nil:
		err = p.handler.SyncTerminatingRuntimePod(ctx, o.RunningPod)
	case wk.state == TerminatingPod:
		grace := wk.gracePeriod
		err = p.handler.SyncTerminatingPod(ctx, o.Pod, status, &grace, wk.statusFn)
	default:
		isTerminal, err = p.handler.SyncPod(ctx, o.UpdateType, o.Pod, o.MirrorPod, status)
	}
	if err != nil {
		err = fmt.Errorf("%s pod %s: %w", wk.state, w.uid, err)
	}
	return isTerminal, true, err
}

// completeWork records the outcome of a sync: a state change, or when the
// pod is due again in the WorkQueue. It reports whether the goroutine must
// exit because the pod is done.
func (p *PodWorkers) completeWork(w *worker, wk work, isTerminal bool, err error) (exit bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w.cancelSync()
	w.cancel = nil
	now := p.clock.Now()
	transition := false
	switch {
	case err != nil:
		p.logSyncError(w, wk, err)
		delay := p.cfg.BackOffPeriod
		if errors.Is(err, ErrTransient) {
			delay = p.cfg.TransientRetry
		}
		p.queue.Enqueue(w.uid, wait.Jitter(delay, jitterFactor))
	case wk.state == TerminatedPod:
		p.log.V(2).Info("Pod finished", "podUID", w.uid)
		w.finished, w.pending = true, nil
		return true
	case wk.state == TerminatingPod && wk.opts.RunningPod != nil && (w.pending == nil || w.pending.Pod == nil):
		p.forgetRuntimeOnlyLocked(w)
		return true
	case wk.state == TerminatingPod:
		p.log.V(2).Info("Pod terminated", "podUID", w.uid)
		w.terminatedAt = now
		w.notifyTerminated()
		transition = true
	case isTerminal:
		p.log.V(2).Info("Pod reached a terminal phase", "podUID", w.uid)
		if !w.terminationRequested() {
			w.terminatingAt = now
		}
		w.gracePeriod = effectiveGracePeriod(w.gracePeriod, wk.opts.Pod, nil)
		transition = true
	default:
		p.queue.Enqueue(w.uid, wait.Jitter(p.cfg.ResyncInterval, jitterFactor))
	}
	if transition {
		// Run the next state's sync now, and have the agent look soon too.
		w.requeueLast()
		p.queue.Enqueue(w.uid, 0)
	} else if w.pending != nil {
		w.signal()
	}
	return false
}

// forgetRuntimeOnlyLocked forgets a runtime-only pod once stopped: it has
// nothing to clean up and no spec to keep. p.mu must be held.
func (p *PodWorkers) forgetRuntimeOnlyLocked(w *worker) {
	p.log.V(2).Info("Runtime-only pod terminated", "podUID", w.uid)
	w.terminatedAt, w.finished, w.removed, w.pending = p.clock.Now(), true, true, nil
	w.notifyTerminated()
	if p.workers[w.uid] == w {
		delete(p.workers, w.uid)
	}
}

// logSyncError logs a failed sync; a sync cancelled on purpose (its pod is
// terminating or its grace period got shorter) is not an error.
func (p *PodWorkers) logSyncError(w *worker, wk work, err error) {
	if errors.Is(err, context.Canceled) {
		p.log.V(2).Info("Pod sync cancelled", "podUID", w.uid, "workType", wk.state)
		return
	}
	p.log.Error(err, "Pod sync failed", "podUID", w.uid, "workType", wk.state)
}
