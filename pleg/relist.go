package pleg

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// relistCore is the relist both PLEGs share: it lists the runtime, hands each
// listed pod to the PLEG once (a runtime may list a pod twice), lets the
// PLEG drop the pods that were not listed, and then advances the cache's
// global timestamp to the time taken before the list, as the kubelet's
// GenericPLEG does: a pod the PLEG did not inspect did not change since
// then. It keeps what Healthy needs (listings failed in a row, the last
// completed relist) and records the kubelet's relist metrics. The PLEG
// serializes calls to run and reads listed only from within them.
type relistCore struct {
	rt      noderuntime.Runtime
	cache   *Cache
	clk     clock.Clock
	log     logr.Logger
	metrics *metrics

	// seen holds the pods the current relist listed; reused.
	seen map[types.UID]struct{}
	// prev is when the previous relist that listed the runtime began.
	prev time.Time

	// mu guards the fields below it.
	mu         sync.Mutex
	runStarted time.Time
	last       time.Time
	failures   relistFailures
}

func newRelistCore(rt noderuntime.Runtime, cache *Cache, clk clock.Clock, log logr.Logger, m *metrics) *relistCore {
	return &relistCore{rt: rt, cache: cache, clk: clk, log: log, metrics: m, seen: make(map[types.UID]struct{})}
}

// started records when Run started, for Healthy.
func (r *relistCore) started() {
	r.mu.Lock()
	r.runStarted = r.clk.Now()
	r.mu.Unlock()
}

// run relists once. each is called for every pod listed, once per UID, in
// list order; then vanished is called, when set, and may ask listed which
// pods this relist saw. run reports whether the relist completed: false
// when the listing failed (counted towards Healthy) or ctx ended before
// every pod was handled; then the cache's timestamp is left alone.
func (r *relistCore) run(ctx context.Context, each func(*noderuntime.Pod), vanished func()) bool {
	t0 := r.clk.Now()
	if !r.prev.IsZero() {
		r.metrics.relistInterval.Observe(t0.Sub(r.prev).Seconds())
	}
	defer func() { r.metrics.relistDuration.Observe(r.clk.Since(t0).Seconds()) }()
	pods, err := r.rt.GetPods(ctx, true)
	r.mu.Lock()
	if err == nil {
		r.failures.reset()
	} else if ctx.Err() == nil {
		r.failures.fail(err)
	}
	r.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			r.log.Error(err, "Unable to list pods; skipping relist")
		}
		return false
	}
	r.prev = t0
	clear(r.seen)
	for _, pod := range pods {
		if ctx.Err() != nil {
			return false
		}
		if _, dup := r.seen[pod.ID]; dup {
			r.log.V(4).Info("Ignoring duplicate pod in runtime list", "podUID", pod.ID)
			continue
		}
		r.seen[pod.ID] = struct{}{}
		each(pod)
	}
	if vanished != nil && ctx.Err() == nil {
		vanished()
	}
	if ctx.Err() != nil {
		return false
	}
	// Every changed pod is in the cache now: let waiters on unchanged pods
	// through.
	r.cache.UpdateTime(t0)
	r.mu.Lock()
	r.last = t0
	r.mu.Unlock()
	r.metrics.lastSeen.Set(float64(t0.Unix()))
	r.metrics.runningPods.Set(float64(runningPods(pods)))
	if v := r.log.V(6); v.Enabled() {
		v.Info("Relisted", "pods", len(r.seen))
	}
	return true
}

// listed reports whether the current relist listed the pod.
func (r *relistCore) listed(uid types.UID) bool {
	_, ok := r.seen[uid]
	return ok
}

// lastRelist returns when the last completed relist began; zero if none has.
func (r *relistCore) lastRelist() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// health returns why the PLEG is not healthy, or nil: the last
// failureThreshold listings in a row failed, no relist completed within
// threshold of the last one, or of Run's start when none has. who names the
// PLEG in the error.
func (r *relistCore) health(who string, failureThreshold int, threshold time.Duration) error {
	r.mu.Lock()
	last, started, failures := r.last, r.runStarted, r.failures
	r.mu.Unlock()
	if err := failures.check(who, failureThreshold); err != nil {
		return err
	}
	if last.IsZero() {
		if elapsed := r.clk.Since(started); !started.IsZero() && elapsed > threshold {
			return fmt.Errorf("%s has not completed a relist since it started %v ago; threshold is %v", who, elapsed, threshold)
		}
		return nil
	}
	if elapsed := r.clk.Since(last); elapsed > threshold {
		return fmt.Errorf("%s was last seen active %v ago; threshold is %v", who, elapsed, threshold)
	}
	return nil
}

// runningPods counts the pods with a ready sandbox, for the running_pods
// gauge.
func runningPods(pods []*noderuntime.Pod) int {
	n := 0
	for _, p := range pods {
		for _, s := range p.Sandboxes {
			if s.State == noderuntime.ContainerStateRunning {
				n++
				break
			}
		}
	}
	return n
}
