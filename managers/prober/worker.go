package prober

import (
	"context"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// worker probes one container with one probe, periodically, until it is
// stopped, Run ends, or the container is gone for good. The fields after
// "Worker goroutine only" are touched by run alone.
type worker struct {
	p         *Prober
	key       probeKey
	pod       *corev1.Pod      // as added; read-only
	container corev1.Container // read-only copy
	spec      corev1.Probe     // with defaults filled; read-only
	sidecar   bool
	results   *resultsCache
	initial   Result
	metrics   workerMetrics

	stopOnce  sync.Once
	stopCh    chan struct{} // closed by stop
	triggerCh chan struct{} // buffered 1: run the probe now

	// Worker goroutine only.
	containerID string
	lastResult  Result
	resultRun   int
	onHold      bool
}

func (p *Prober) newWorker(key probeKey, pod *corev1.Pod, c *corev1.Container, sidecar bool) *worker {
	w := &worker{
		p:         p,
		key:       key,
		pod:       pod,
		container: *c,
		spec:      withProbeDefaults(*probeSpec(c, key.probe)),
		sidecar:   sidecar,
		results:   p.resultsFor(key.probe),
		stopCh:    make(chan struct{}),
		triggerCh: make(chan struct{}, 1),
	}
	switch key.probe {
	case Liveness:
		w.initial = Success
	case Readiness:
		w.initial = Failure
	default:
		w.initial = Unknown
	}
	w.metrics = p.metrics.forWorker(key.probe, pod, c.Name)
	return w
}

func withProbeDefaults(s corev1.Probe) corev1.Probe {
	if s.PeriodSeconds <= 0 {
		s.PeriodSeconds = int32(defaultPeriod / time.Second)
	}
	if s.TimeoutSeconds <= 0 {
		s.TimeoutSeconds = int32(defaultTimeout / time.Second)
	}
	if s.SuccessThreshold <= 0 {
		s.SuccessThreshold = defaultSuccessThreshold
	}
	if s.FailureThreshold <= 0 {
		s.FailureThreshold = defaultFailureThreshold
	}
	return s
}

// stop makes the worker exit; it is idempotent and does not block.
func (w *worker) stop() { w.stopOnce.Do(func() { close(w.stopCh) }) }

// trigger asks for a probe now; it does not block.
func (w *worker) trigger() {
	select {
	case w.triggerCh <- struct{}{}:
	default:
	}
}

// run probes until the worker is stopped, ctx ends or doProbe gives up.
func (w *worker) run(ctx context.Context) {
	defer w.cleanup()
	period := time.Duration(w.spec.PeriodSeconds) * time.Second
	if d := w.p.jitter(period); d > 0 {
		t := w.p.clk.NewTimer(d)
		w.idle()
		select {
		case <-t.C():
		case <-w.stopCh:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
	ticker := w.p.clk.NewTicker(period)
	defer ticker.Stop()
	for w.doProbe(ctx) {
		w.idle()
		select {
		case <-ticker.C():
		case <-w.triggerCh:
		case <-w.stopCh:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (w *worker) idle() { w.p.testHook(w.key, "idle") }

// cleanup forgets the worker's result, metrics and registration.
func (w *worker) cleanup() {
	if w.containerID != "" {
		w.results.remove(w.containerID)
	}
	w.metrics.delete()
	w.p.removeWorker(w)
	w.p.log.V(4).Info("probe worker stopped", "pod", klog.KObj(w.pod), "containerName", w.key.container, "probeType", w.key.probe)
	w.p.testHook(w.key, "exit")
}

// set caches a result for the current container.
func (w *worker) set(ctx context.Context, r Result) {
	w.results.set(ctx, w.stopCh, w.containerID, r, w.pod.UID)
}

// doProbe probes once if the container is due and records the result. It
// reports whether the worker should go on.
func (w *worker) doProbe(ctx context.Context) bool {
	start := w.p.clk.Now()
	rec := w.p.record(w.pod.UID)
	if rec == nil {
		return true // no status yet, or the pod is being removed
	}
	if rec.phase == corev1.PodSucceeded || rec.phase == corev1.PodFailed {
		return false
	}
	c, ok := rec.container(w.key.container)
	if !ok {
		return true // not created yet
	}
	if c.id != w.containerID {
		w.newContainer(ctx, &c)
	}
	if w.onHold {
		return true
	}
	if !c.running {
		w.set(ctx, Failure)
		// Probing goes on only for a container that will be restarted: the
		// container's own restartPolicy and rules decide, as the kubelet's.
		return !c.terminated || w.sidecar || noderuntime.ContainerShouldRestart(&w.container, &w.pod.Spec, c.exitCode)
	}
	if rec.deleting && w.key.probe != Readiness {
		// Let a pod being deleted stop quietly.
		w.set(ctx, Success)
		return false
	}
	if w.p.clk.Since(c.startedAt) < time.Duration(w.spec.InitialDelaySeconds)*time.Second {
		return true
	}
	if started := w.p.started(w.pod.UID, &c); started != (w.key.probe != Startup) {
		return true // startup probes run before the start, the others after
	}
	result, err := w.p.probe(ctx, w, rec.podIP)
	if err != nil {
		return true // errored probes do not count
	}
	w.metrics.observe(result, w.p.clk.Since(start))
	w.count(ctx, result)
	return true
}

// newContainer switches the worker to a new container: counters reset, the
// result starts over and probing resumes. An adopted container keeps its
// state until its first verdict.
func (w *worker) newContainer(ctx context.Context, c *containerRecord) {
	if w.containerID != "" {
		w.results.remove(w.containerID)
	}
	w.containerID = c.id
	w.lastResult, w.resultRun, w.onHold = Unknown, 0, false
	switch {
	case !w.p.adopted(c):
		w.set(ctx, w.initial)
	case w.key.probe == Startup && c.carriedStarted:
		w.set(ctx, Success)
	}
}

// count counts a result against the thresholds and caches it once the run
// is long enough. A final liveness failure or a startup verdict holds the
// worker until the container is replaced.
func (w *worker) count(ctx context.Context, result Result) {
	if w.lastResult == result {
		w.resultRun++
	} else {
		w.lastResult, w.resultRun = result, 1
	}
	if (result == Failure && w.resultRun < int(w.spec.FailureThreshold)) ||
		(result == Success && w.resultRun < int(w.spec.SuccessThreshold)) {
		return
	}
	w.set(ctx, result)
	if (w.key.probe == Liveness && result == Failure) || w.key.probe == Startup {
		w.onHold = true
		w.resultRun = 0
	}
}

// record returns the pod's latest recorded status, or nil.
func (p *Prober) record(uid types.UID) *podRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.statuses[uid]
}
