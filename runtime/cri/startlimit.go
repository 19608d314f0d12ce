package cri

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/internal/promutil"
)

// Start stages, in the order a pod goes through them; a later stage waits
// ahead of an earlier one.
const (
	stageSandbox = iota // RunPodSandbox
	stageCreate         // CreateContainer
	stageStart          // StartContainer
	stageCount
)

// stageOp is the kubelet's operation name (Instrument's) of the calls of
// stage.
func stageOp(stage int) string {
	switch stage {
	case stageSandbox:
		return "run_podsandbox"
	case stageCreate:
		return "create_container"
	default:
		return "start_container"
	}
}

// LimitStarts wraps a CRI runtime service so that at most n of its
// RunPodSandbox, CreateContainer and StartContainer calls are in flight at
// once. A call over the limit waits, before it reaches the runtime, until a
// call ends or its context does (then it fails with the context's error and
// never reaches the runtime). Waiting calls go in order of the pod's
// progress, then of arrival: a StartContainer before any CreateContainer,
// a CreateContainer before any RunPodSandbox, so pods already begun finish
// first instead of every pod's sandbox being made before any container.
//
// It keeps a burst of new pods (500 at once on a small node) from piling
// every start on the runtime together, each call then outlasting the
// request timeout and being retried as a new container. The wait happens
// before the call's own timeout starts. Every other call, the stops and
// removals of a kill above all, passes straight through.
//
// Every start call observes its wait for a slot, measured on clk, in
// nodekit_runtime_start_slot_wait_seconds on reg by operation_type (the
// kubelet's names: run_podsandbox, create_container, start_container): 0
// when a slot was free at once, and a wait that ended with the context
// too. Instrument's runtime operation metrics, when rs is instrumented,
// time only the runtime's part of a call and never see this wait. A call
// that had to queue and then got its slot is also logged at V(2), "Waited
// for a runtime start slot", naming its pod (and container), so an
// operator can tell which pods a start was delayed for, and by how long.
//
// n <= 0 returns rs itself and registers nothing: no limit, the kubelet's
// behaviour. The returned service is safe for concurrent use.
func LimitStarts(rs criapi.RuntimeService, n int, clk clock.PassiveClock, reg prometheus.Registerer, log logr.Logger) criapi.RuntimeService {
	if n <= 0 {
		return rs
	}
	return &limitedStarts{RuntimeService: rs, slots: newStartSlots(n), clk: clk, wait: newStartWaitMetric(reg), log: log}
}

// newStartWaitMetric registers the histogram of the wait for a start slot.
func newStartWaitMetric(reg prometheus.Registerer) *prometheus.HistogramVec {
	return promutil.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "nodekit", Name: "runtime_start_slot_wait_seconds",
		Help: "Duration in seconds a RunPodSandbox, CreateContainer or StartContainer call waited in nodekit " +
			"for a start slot before reaching the runtime (0 when one was free; a wait ended by the call's " +
			"context included), by operation type. Exists only with --max-parallel-starts.",
		Buckets: prometheus.ExponentialBuckets(.005, 2.5, 14)}, []string{"operation_type"}))
}

type limitedStarts struct {
	criapi.RuntimeService
	slots *startSlots
	clk   clock.PassiveClock
	wait  *prometheus.HistogramVec
	log   logr.Logger
}

// acquire takes a slot for a call of stage and observes how long that took,
// whether it got the slot or its context ended first. queued says whether
// the call had to wait, and waited how long.
func (l *limitedStarts) acquire(ctx context.Context, stage int) (queued bool, waited time.Duration, err error) {
	start := l.clk.Now()
	queued, err = l.slots.acquire(ctx, stage)
	waited = l.clk.Since(start)
	l.wait.WithLabelValues(stageOp(stage)).Observe(waited.Seconds())
	return queued, waited, err
}

// logWait logs, at V(2), that a call of stage waited for its slot; who
// gives the key/value pairs naming the call, built only when logged.
func (l *limitedStarts) logWait(stage int, waited time.Duration, who func() []any) {
	if v := l.log.V(2); v.Enabled() {
		kv := append([]any{"operation", stageOp(stage), "wait", waited, "limit", l.slots.limit}, who()...)
		v.Info("Waited for a runtime start slot", kv...)
	}
}

// podOf names a sandbox config's pod for logWait.
func podOf(c *runtimeapi.PodSandboxConfig) []any {
	m := c.GetMetadata()
	return []any{"pod", klog.KRef(m.GetNamespace(), m.GetName()), "podUID", m.GetUid()}
}

func (l *limitedStarts) RunPodSandbox(ctx context.Context, c *runtimeapi.PodSandboxConfig, handler string) (string, error) {
	queued, waited, err := l.acquire(ctx, stageSandbox)
	if err != nil {
		return "", err
	}
	defer l.slots.release()
	if queued {
		l.logWait(stageSandbox, waited, func() []any { return podOf(c) })
	}
	return l.RuntimeService.RunPodSandbox(ctx, c, handler)
}

func (l *limitedStarts) CreateContainer(ctx context.Context, sb string, c *runtimeapi.ContainerConfig, sc *runtimeapi.PodSandboxConfig) (string, error) {
	queued, waited, err := l.acquire(ctx, stageCreate)
	if err != nil {
		return "", err
	}
	defer l.slots.release()
	if queued {
		l.logWait(stageCreate, waited, func() []any { return append(podOf(sc), "container", c.GetMetadata().GetName()) })
	}
	return l.RuntimeService.CreateContainer(ctx, sb, c, sc)
}

func (l *limitedStarts) StartContainer(ctx context.Context, id string) error {
	queued, waited, err := l.acquire(ctx, stageStart)
	if err != nil {
		return err
	}
	defer l.slots.release()
	if queued {
		l.logWait(stageStart, waited, func() []any { return []any{"containerID", id} })
	}
	return l.RuntimeService.StartContainer(ctx, id)
}

// startSlots is a counting semaphore whose waiters are served by stage,
// latest first, then in arrival order.
type startSlots struct {
	mu      sync.Mutex
	limit   int
	free    int
	waiting [stageCount][]chan struct{}
}

func newStartSlots(n int) *startSlots { return &startSlots{limit: n, free: n} }

// acquire takes a slot for a call of stage, waiting while none is free;
// queued says whether it had to wait.
func (s *startSlots) acquire(ctx context.Context, stage int) (queued bool, err error) {
	s.mu.Lock()
	if s.free > 0 {
		s.free--
		s.mu.Unlock()
		return false, nil
	}
	granted := make(chan struct{})
	s.waiting[stage] = append(s.waiting[stage], granted)
	s.mu.Unlock()
	select {
	case <-granted:
		return true, nil
	case <-ctx.Done():
		if !s.leave(stage, granted) {
			s.release() // granted as the context ended: pass the slot on
		}
		return true, fmt.Errorf("waiting for one of the %d runtime start slots: %w", s.limit, ctx.Err())
	}
}

// leave takes a waiter out of its queue; false means it was granted a
// slot already.
func (s *startSlots) leave(stage int, granted chan struct{}) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.waiting[stage]
	for i, ch := range q {
		if ch == granted {
			s.waiting[stage] = append(q[:i:i], q[i+1:]...)
			return true
		}
	}
	return false
}

// release hands a slot to the first waiter of the latest stage, or frees it.
func (s *startSlots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for stage := stageCount - 1; stage >= 0; stage-- {
		if q := s.waiting[stage]; len(q) > 0 {
			s.waiting[stage] = q[1:]
			close(q[0])
			return
		}
	}
	s.free++
}
