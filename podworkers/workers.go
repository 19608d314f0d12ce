package podworkers

import (
	"context"
	"errors"
	"sync"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// ErrAlreadyRun is returned by Run when it is called a second time.
var ErrAlreadyRun = errors.New("podworkers: Run called more than once")

// PodWorkers is the default Workers: one goroutine per pod UID driving the
// pod through SyncHandler's methods. See the package documentation for the
// state machine and the concurrency rules.
type PodWorkers struct {
	handler SyncHandler
	cache   StatusCache
	queue   *WorkQueue
	clock   clock.WithTicker
	log     logr.Logger
	cfg     Config

	// wg counts worker goroutines; only Run adds to it.
	wg sync.WaitGroup
	// startCh wakes Run when toStart has workers waiting for a goroutine.
	startCh chan struct{}

	mu sync.Mutex
	// workers is every pod UID known to the workers, until SyncKnownPods
	// forgets it.
	workers map[types.UID]*worker
	// toStart are workers waiting for Run to give them a goroutine.
	toStart []*worker
	// running is true while Run runs; ran once Run has been called.
	running, ran bool
	// synced is true once SyncKnownPods has run: every pod the caller wants
	// has been handed to UpdatePod, so an unknown UID has no containers.
	synced bool

	// duration records each sync's duration by operation.
	duration *prometheus.HistogramVec

	// testHookExit, when set, is called as a worker goroutine exits.
	testHookExit func(uid types.UID)
}

var _ Workers = (*PodWorkers)(nil)

// New returns pod workers that call handler, read statuses from cache,
// queue resyncs in queue and record kubelet_pod_worker_duration_seconds on
// reg (nil: no metrics). cfg's zero and negative fields take their defaults
// (check it with Config.Validate first). New starts nothing: pods handed to
// UpdatePod before Run are recorded and start syncing once Run runs.
func New(handler SyncHandler, cache StatusCache, queue *WorkQueue, clk clock.WithTicker, reg prometheus.Registerer, log logr.Logger, cfg Config) *PodWorkers {
	return &PodWorkers{
		duration: newWorkerDuration(reg),
		handler:  handler,
		cache:    cache,
		queue:    queue,
		clock:    clk,
		log:      log.WithName("podworkers"),
		cfg:      cfg.withDefaults(),
		startCh:  make(chan struct{}, 1),
		workers:  map[types.UID]*worker{},
	}
}

// Run starts a goroutine for each pod with work, now and as UpdatePod hands
// over new pods, until ctx ends. Every sync runs with a context derived from
// ctx, so ending ctx cancels syncs in progress; Run returns nil once every
// worker goroutine has exited. Pods updated after Run returned are recorded
// but never synced. Run may be called once; later calls return ErrAlreadyRun.
func (p *PodWorkers) Run(ctx context.Context) error {
	p.mu.Lock()
	if p.ran {
		p.mu.Unlock()
		return ErrAlreadyRun
	}
	p.ran, p.running = true, true
	p.mu.Unlock()
	p.log.V(2).Info("Starting pod workers")

	for {
		p.startWaiting(ctx)
		select {
		case <-ctx.Done():
			p.mu.Lock()
			p.running = false
			p.toStart = nil
			p.mu.Unlock()
			p.wg.Wait()
			p.log.V(2).Info("Stopped pod workers")
			return nil
		case <-p.startCh:
		}
	}
}

// startWaiting gives a goroutine to every worker waiting for one.
func (p *PodWorkers) startWaiting(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.toStart {
		p.wg.Add(1)
		go p.workerLoop(ctx, w)
	}
	p.toStart = nil
}

// IsPodKnownTerminated reports whether the pod's containers are known to be
// stopped: false for unknown pods. It does not block.
func (p *PodWorkers) IsPodKnownTerminated(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w, ok := p.workers[uid]; ok {
		return w.terminated()
	}
	return false
}

// CouldHaveRunningContainers reports whether the pod may have running
// containers: for a known pod until its termination completes; for an
// unknown pod only until SyncKnownPods has run once. It does not block.
func (p *PodWorkers) CouldHaveRunningContainers(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w, ok := p.workers[uid]; ok {
		return !w.terminated()
	}
	return !p.synced
}

// IsPodTerminationRequested reports whether the pod is terminating or
// terminated: false for unknown pods. It does not block.
func (p *PodWorkers) IsPodTerminationRequested(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w, ok := p.workers[uid]; ok {
		return w.terminationRequested()
	}
	return false
}

// shouldPodContentBeRemoved reports whether the pod's directories and dead
// containers may go: its containers are stopped and it was deleted (or
// orphaned) or evicted. For an unknown pod it is true once SyncKnownPods has
// run once. It does not block.
func (p *PodWorkers) shouldPodContentBeRemoved(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w, ok := p.workers[uid]; ok {
		return w.terminated() && (w.deleted || w.evicted)
	}
	return p.synced
}

// SyncKnownPods forgets the finished workers of pods not in desired, and the
// finished workers for which a restart was requested (a SyncPodCreate for a
// UID that was terminating); the caller re-sends SyncPodCreate for every
// desired pod missing from the result to start it afresh. A worker not in
// desired that has not finished becomes an orphan the workers drive to the
// end themselves: one that never started a sync is forgotten at once, one
// still syncing starts terminating with the grace period of its last spec,
// one terminating is retried. The result is the state of every remaining
// worker; the caller owns it. SyncKnownPods does not block on syncs.
func (p *PodWorkers) SyncKnownPods(desired []*corev1.Pod) map[types.UID]PodWorkerSync {
	want := make(map[types.UID]bool, len(desired))
	for _, pod := range desired {
		want[pod.UID] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.synced = true
	known := make(map[types.UID]PodWorkerSync, len(p.workers))
	for uid, w := range p.workers {
		orphan := !want[uid]
		if (orphan || w.restartRequested) && p.forgetLocked(w, orphan) {
			continue
		}
		pod := w.lastPod()
		known[uid] = PodWorkerSync{
			State:     w.state(),
			Orphan:    orphan,
			HasConfig: pod != nil,
			Static:    pod != nil && isStatic(pod),
		}
	}
	return known
}

// forgetLocked removes w if it has finished, or has never started and is an
// orphan; otherwise it drives an orphan towards termination. It reports
// whether w was removed. p.mu must be held.
func (p *PodWorkers) forgetLocked(w *worker, orphan bool) bool {
	if !w.finished {
		if !orphan {
			return false
		}
		w.deleted = true
		if w.active != nil || w.observedRuntime {
			if !w.terminationRequested() {
				p.log.V(2).Info("Orphaned pod begins terminating", "podUID", w.uid)
				w.terminatingAt = p.clock.Now()
				w.gracePeriod = effectiveGracePeriod(0, w.lastPod(), nil)
				w.cancelSync()
			}
			w.requeueLast()
			return false
		}
	}
	p.log.V(4).Info("Forgetting pod worker", "podUID", w.uid, "finished", w.finished)
	delete(p.workers, w.uid)
	w.removed = true
	w.pending = nil
	w.notifyTerminated()
	w.signal()
	return true
}
