package prober

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// ErrAlreadyRunning is returned by a second call of Run.
var ErrAlreadyRunning = errors.New("prober: already running")

// Prober is the default Manager: one goroutine per container probe, as the
// kubelet's prober manager, with a results cache per probe type.
type Prober struct {
	exec    ExecRunner
	clk     clock.WithTicker
	rec     EventRecorder
	log     logr.Logger
	cfg     Config
	metrics *metrics
	http    *http.Transport
	// start is when the Prober was created: the reference for first-probe
	// jitter and for recognising containers adopted after a restart.
	start time.Time

	liveness, readiness, startup *resultsCache

	mu       sync.Mutex
	rand     *rand.Rand
	workers  map[probeKey]*worker
	statuses map[types.UID]*podRecord
	probed   map[types.UID]int // number of workers per pod
	pending  []*worker         // added, not yet started by Run
	wake     chan struct{}
	running  bool

	// hook, when set (tests only), is called with "idle" whenever a worker
	// is about to wait for its next tick, and with "exit" when it has
	// exited.
	hook func(key probeKey, event string)
}

var (
	_ Manager         = (*Prober)(nil)
	_ ResultsProvider = (*Prober)(nil)
)

// probeKey identifies one worker.
type probeKey struct {
	podUID    types.UID
	container string
	probe     ProbeType
}

// New returns a Prober. exec runs exec probes (nil fails them with an error);
// rec records probe events (nil logs them through log); reg receives the
// prober_probe_total and prober_probe_duration_seconds metrics (nil means no
// metrics). It starts nothing: Run does.
func New(exec ExecRunner, clk clock.WithTicker, reg prometheus.Registerer, rec EventRecorder, log logr.Logger, cfg Config) *Prober {
	cfg = cfg.withDefaults()
	log = log.WithName("prober")
	if rec == nil {
		rec = LogRecorder{Log: log}
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = clk.Now().UnixNano()
	}
	return &Prober{
		exec:      exec,
		clk:       clk,
		rec:       rec,
		log:       log,
		cfg:       cfg,
		metrics:   newMetrics(reg),
		http:      newHTTPTransport(),
		start:     clk.Now(),
		liveness:  newResultsCache(Liveness, cfg.UpdateBuffer),
		readiness: newResultsCache(Readiness, cfg.UpdateBuffer),
		startup:   newResultsCache(Startup, cfg.UpdateBuffer),
		rand:      rand.New(rand.NewPCG(uint64(seed), uint64(seed)>>1|1)),
		workers:   make(map[probeKey]*worker),
		statuses:  make(map[types.UID]*podRecord),
		probed:    make(map[types.UID]int),
		wake:      make(chan struct{}, 1),
	}
}

// Liveness returns the liveness results.
func (p *Prober) Liveness() Results { return p.liveness }

// Readiness returns the readiness results.
func (p *Prober) Readiness() Results { return p.readiness }

// Startup returns the startup results.
func (p *Prober) Startup() Results { return p.startup }

// Run starts the workers of the pods added so far, and of pods added later,
// and blocks until ctx ends and every worker has stopped.
func (p *Prober) Run(ctx context.Context) error {
	p.mu.Lock()
	if p.running {
		p.mu.Unlock()
		return ErrAlreadyRunning
	}
	p.running = true
	p.mu.Unlock()
	p.log.Info("starting probe workers")

	var wg sync.WaitGroup
	defer p.http.CloseIdleConnections()
	defer wg.Wait()
	for {
		p.mu.Lock()
		pending := p.pending
		p.pending = nil
		p.mu.Unlock()
		for _, w := range pending {
			wg.Go(func() { w.run(ctx) })
		}
		select {
		case <-ctx.Done():
			return nil
		case <-p.wake:
		}
	}
}

// AddPod creates the workers of the pod's probes; Run starts them.
func (p *Prober) AddPod(pod *corev1.Pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	added := 0
	add := func(c *corev1.Container, sidecar bool) {
		for _, t := range [...]ProbeType{Startup, Readiness, Liveness} {
			key := probeKey{podUID: pod.UID, container: c.Name, probe: t}
			if probeSpec(c, t) == nil || p.workers[key] != nil {
				continue
			}
			w := p.newWorker(key, pod, c, sidecar)
			p.workers[key] = w
			p.probed[pod.UID]++
			p.pending = append(p.pending, w)
			added++
		}
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i], false)
	}
	for i := range pod.Spec.InitContainers {
		if isSidecar(&pod.Spec.InitContainers[i]) {
			add(&pod.Spec.InitContainers[i], true)
		}
	}
	if added > 0 {
		p.log.V(2).Info("added probe workers", "pod", klog.KObj(pod), "podUID", pod.UID, "workers", added)
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// RemovePod stops the pod's workers and forgets its recorded status; each
// worker forgets its results as it stops.
func (p *Prober) RemovePod(pod *corev1.Pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked(func(k probeKey) bool { return k.podUID == pod.UID })
	delete(p.statuses, pod.UID)
}

// CleanupPods stops the workers of pods not mapped to true in desired.
func (p *Prober) CleanupPods(desired map[types.UID]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked(func(k probeKey) bool { return !desired[k.podUID] })
	for uid := range p.statuses {
		if !desired[uid] {
			delete(p.statuses, uid)
		}
	}
}

// StopLivenessAndStartup stops the liveness and startup workers of the pod,
// so that a terminating pod is not restarted by a failing probe during its
// grace period (the kubelet does so when a pod starts terminating). It is an
// optional capability beyond Manager; readiness keeps running.
func (p *Prober) StopLivenessAndStartup(pod *corev1.Pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked(func(k probeKey) bool {
		return k.podUID == pod.UID && k.probe != Readiness
	})
}

// stopLocked stops the workers whose key matches.
func (p *Prober) stopLocked(match func(probeKey) bool) {
	for k, w := range p.workers {
		if match(k) {
			w.stop()
		}
	}
}

// removeWorker is called by a worker when it exits.
func (p *Prober) removeWorker(w *worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.workers[w.key] != w {
		return
	}
	delete(p.workers, w.key)
	if p.probed[w.key.podUID]--; p.probed[w.key.podUID] <= 0 {
		delete(p.probed, w.key.podUID)
		delete(p.statuses, w.key.podUID)
	}
}

// hasWorker reports whether the probe has a worker.
func (p *Prober) hasWorker(uid types.UID, container string, t ProbeType) bool {
	_, ok := p.getWorker(uid, container, t)
	return ok
}

func (p *Prober) getWorker(uid types.UID, container string, t ProbeType) (*worker, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w, ok := p.workers[probeKey{podUID: uid, container: container, probe: t}]
	return w, ok
}

// jitter returns how long a worker with the given period waits before its
// first probe: a random part of the period while the Prober is younger than
// one period, else nothing.
func (p *Prober) jitter(period time.Duration) time.Duration {
	if p.clk.Since(p.start) >= period {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Duration(p.rand.Int64N(int64(period)))
}

// resultsFor returns the cache of a probe type.
func (p *Prober) resultsFor(t ProbeType) *resultsCache {
	switch t {
	case Liveness:
		return p.liveness
	case Startup:
		return p.startup
	}
	return p.readiness
}

func (p *Prober) testHook(key probeKey, event string) {
	if p.hook != nil {
		p.hook(key, event)
	}
}
