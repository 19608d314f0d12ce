package pleg

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

var _ Interface = (*Generic)(nil)

// Generic is the relisting PLEG, the kubelet's GenericPLEG: every
// RelistPeriod it lists all pods from the runtime, compares each container's
// and sandbox's state with the previous relist, inspects only the pods that
// changed, writes their status to the Cache and emits events.
//
// Like the kubelet's, it misses a container that is created, exits and is
// removed within one relist period; the agent's periodic resync is the
// safety net.
type Generic struct {
	rt     noderuntime.Runtime
	cache  *Cache
	clk    clock.WithTicker
	log    logr.Logger
	cfg    Config
	events chan *Event

	// relistMu serializes Relist and guards the fields below it.
	relistMu sync.Mutex
	// records holds, per pod, what the last relist saw.
	records map[types.UID]*podRecord
	// buf is reused for each pod's events.
	buf []*Event
	// rl lists the runtime and keeps the relist health and metrics.
	rl *relistCore

	dropped atomic.Uint64
	metrics *metrics
}

// podRecord is what the PLEG remembers about one pod between relists.
type podRecord struct {
	// old is the pod as listed at its last successful inspection; nil until
	// the first one.
	old *noderuntime.Pod
	// reinspect is set when the last inspection failed.
	reinspect bool
}

// NewGeneric returns a relisting PLEG over rt that writes to cache and
// records the kubelet's PLEG metrics on reg (nil: none). Zero fields of cfg
// take their defaults; call cfg.Validate first to reject bad values. It does
// no I/O and starts no goroutines; call Run.
func NewGeneric(rt noderuntime.Runtime, cache *Cache, clk clock.WithTicker, reg prometheus.Registerer, log logr.Logger, cfg Config) *Generic {
	cfg = cfg.withDefaults()
	g := &Generic{
		rt:      rt,
		cache:   cache,
		clk:     clk,
		log:     log.WithName("pleg"),
		cfg:     cfg,
		events:  make(chan *Event, cfg.ChannelCapacity),
		records: make(map[types.UID]*podRecord),
		metrics: newMetrics(reg),
	}
	g.rl = newRelistCore(rt, cache, clk, g.log, g.metrics)
	return g
}

// Run relists right away and then RelistPeriod after the end of each relist,
// until ctx ends; it returns nil then. Call it once.
func (g *Generic) Run(ctx context.Context) error {
	g.rl.started()
	g.log.Info("Starting generic PLEG", "relistPeriod", g.cfg.RelistPeriod, "relistThreshold", g.cfg.RelistThreshold)
	defer g.log.Info("Stopped generic PLEG")
	for ctx.Err() == nil {
		g.Relist(ctx)
		t := g.clk.NewTimer(g.cfg.RelistPeriod)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C():
		}
	}
	return nil
}

// Watch returns the event channel: the same channel on every call, never
// closed. Events for a pod are sent after the pod's new status is in the
// Cache. The PLEG never blocks on it: when it is full, events are dropped.
func (g *Generic) Watch() <-chan *Event { return g.events }

// Healthy reports false when the last RelistFailureThreshold relists in a
// row could not list the runtime, when the last completed relist is older
// than RelistThreshold, or when Run started more than RelistThreshold ago
// and no relist has completed yet. Safe for concurrent use.
func (g *Generic) Healthy() (bool, error) {
	if err := g.rl.health("pleg", g.cfg.RelistFailureThreshold, g.cfg.RelistThreshold); err != nil {
		return false, err
	}
	return true, nil
}

// LastRelist returns when the last completed relist began (its timestamp);
// zero if none has completed, e.g. because Run was never called. Safe for
// concurrent use.
func (g *Generic) LastRelist() time.Time { return g.rl.lastRelist() }

// DroppedEvents returns how many events were dropped because the event
// channel was full. Safe for concurrent use.
func (g *Generic) DroppedEvents() uint64 { return g.dropped.Load() }

// Relist lists the runtime once, updates the Cache and emits events; Run
// calls it periodically, tests and benchmarks call it directly. Calls are
// serialized. When listing fails nothing is updated and the failure counts
// towards RelistFailureThreshold (Healthy says so once it is reached); a pod whose inspection fails has the error stored in the Cache and
// is inspected again on the next relist.
func (g *Generic) Relist(ctx context.Context) {
	g.relistMu.Lock()
	defer g.relistMu.Unlock()
	g.rl.run(ctx, func(pod *noderuntime.Pod) {
		r := g.records[pod.ID]
		if r == nil {
			r = &podRecord{}
			g.records[pod.ID] = r
		}
		g.relistPod(ctx, pod.ID, r, pod)
	}, func() {
		if len(g.records) == len(g.rl.seen) {
			return
		}
		for uid, r := range g.records {
			if !g.rl.listed(uid) {
				g.relistPod(ctx, uid, r, nil)
			}
		}
	})
}

// relistPod compares one pod with its record, inspects it when needed and
// sends its events. cur is nil for a pod that is no longer listed.
func (g *Generic) relistPod(ctx context.Context, uid types.UID, r *podRecord, cur *noderuntime.Pod) {
	g.buf = appendPodEvents(g.buf[:0], uid, r.old, cur)
	events := g.buf
	defer clear(g.buf)
	if cur == nil {
		// The runtime no longer has any sandbox or container of the pod:
		// drop its entry, so the cache reports an empty status, as the
		// kubelet does. The relist's UpdateTime wakes its waiters.
		g.log.V(4).Info("Deleting status of vanished pod", "podUID", uid)
		g.cache.Delete(uid)
		delete(g.records, uid)
		g.send(events, nil)
		return
	}
	if len(events) == 0 && !r.reinspect && r.old != nil {
		return
	}
	status, err := g.inspect(ctx, cur)
	if err != nil {
		// Keep the old record so the same events are found next time.
		r.reinspect = true
		return
	}
	r.reinspect = false
	r.old = cur
	g.send(events, status)
}

// inspect reads the pod's status from the runtime and stores it, or the
// error, in the cache, stamped with the time taken just before the call.
func (g *Generic) inspect(ctx context.Context, pod *noderuntime.Pod) (*noderuntime.PodStatus, error) {
	timestamp := g.clk.Now()
	status, err := g.rt.GetPodStatus(ctx, pod.ID, pod.Name, pod.Namespace)
	if err != nil && ctx.Err() != nil {
		// Stopping: leave the cache as it is rather than store ctx's error.
		return nil, err
	}
	if err != nil {
		err = fmt.Errorf("inspect pod %s/%s (%s): %w", pod.Namespace, pod.Name, pod.ID, err)
		g.log.Error(err, "Unable to inspect pod; retrying on next relist", "pod", klog.KRef(pod.Namespace, pod.Name), "podUID", pod.ID)
	} else if status != nil {
		status.IPs = g.podIPs(pod.ID, status)
	}
	g.cache.Set(pod.ID, status, err, timestamp)
	return status, err
}

// podIPs keeps the cached IPs of a pod whose new status has none and no ready
// sandbox: the API expects a finished pod to keep its IP, and the network
// may be torn down before the PLEG inspects it. status is the caller's own,
// fresh from the runtime.
func (g *Generic) podIPs(uid types.UID, status *noderuntime.PodStatus) []string {
	if len(status.IPs) != 0 {
		return status.IPs
	}
	for _, sb := range status.SandboxStatuses {
		if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			return status.IPs
		}
	}
	old, _ := g.cache.Get(uid)
	return old.IPs
}

// send emits events without blocking. ContainerChanged events are not sent,
// as in the kubelet: nothing acts on them, and the pod was inspected anyway.
func (g *Generic) send(events []*Event, status *noderuntime.PodStatus) {
	for _, ev := range events {
		if ev.Type == ContainerChanged {
			continue
		}
		g.log.V(2).Info("Pod lifecycle event", "podUID", ev.ID, "event", ev.Type, "containerID", ev.Data)
		if ev.Type == ContainerDied && status != nil && g.log.V(2).Enabled() {
			for _, c := range status.ContainerStatuses {
				if c.ID.ID == ev.Data {
					g.log.V(2).Info("Container finished", "podUID", ev.ID, "containerID", ev.Data, "exitCode", c.ExitCode)
				}
			}
		}
		select {
		case g.events <- ev:
		default:
			n := g.dropped.Add(1)
			g.metrics.discardEvents.Inc()
			g.log.Error(nil, "Event channel is full; dropping event", "podUID", ev.ID, "event", ev.Type, "dropped", n)
		}
	}
}
