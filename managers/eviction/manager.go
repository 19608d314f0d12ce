package eviction

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Manager watches the signals and evicts pods when thresholds are met.
// Implementations must be safe for concurrent use.
type Manager interface {
	// Run monitors once per interval until ctx ends; it returns nil on a
	// clean stop.
	Run(ctx context.Context) error
	// Conditions are the pressure conditions that hold now. The caller
	// owns the map.
	Conditions() map[corev1.NodeConditionType]bool
}

// StatsReader is the part of the stats provider the manager reads.
type StatsReader interface {
	NodeStats(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.NodeStats, error)
	ListPodStats(ctx context.Context, onlyCPUAndMemory bool) ([]statsapi.PodStats, error)
}

// PodLister lists the pods that may be evicted: the active ones.
type PodLister interface {
	ActivePods() []*corev1.Pod
}

// PodKiller terminates an evicted pod with the given grace period, applying
// status to its final status; it blocks until the pod has terminated and
// its resources are reclaimed (the kubelet's waitForPodsCleanup: volumes
// torn down), within a bound of its own, or ctx ends.
type PodKiller interface {
	KillPod(ctx context.Context, pod *corev1.Pod, gracePeriodSeconds int64, status func(*corev1.PodStatus)) error
}

// Reclaimer frees node-level resources (unused images) before pods are
// evicted for a disk signal; images.Manager is one.
type Reclaimer interface {
	DeleteUnusedImages(ctx context.Context) (uint64, error)
}

// ContainerGC removes, on demand, every dead container and sandbox that
// is not needed, those of terminated pods included, before pods are
// evicted for a disk signal (the kubelet's
// containerGC.DeleteAllUnusedContainers); agent.Agent is one.
type ContainerGC interface {
	DeleteAllUnusedContainers(ctx context.Context) error
}

// immediateGracePeriod is the kubelet's grace period for hard evictions.
const immediateGracePeriod = 1

var _ Manager = (*Default)(nil)

// Default is the kubelet's eviction manager.
type Default struct {
	stats   StatsReader
	pods    PodLister
	killer  PodKiller
	reclaim Reclaimer   // may be nil
	dead    ContainerGC // may be nil
	ranker  Ranker
	events  noderuntime.EventRecorder
	clk     clock.WithTicker
	log     logr.Logger
	cfg     Config
	monitor *Monitor

	mu         sync.Mutex
	conditions map[corev1.NodeConditionType]bool
}

// NewDefault returns the manager; cfg must be valid. reclaim and dead may
// be nil; ranker nil means KubeletRanker. It does no I/O.
func NewDefault(stats StatsReader, pods PodLister, killer PodKiller, reclaim Reclaimer, dead ContainerGC, ranker Ranker,
	events noderuntime.EventRecorder, clk clock.WithTicker, log logr.Logger, cfg Config) (*Default, error) {
	policy, err := cfg.Policy()
	if err != nil {
		return nil, err
	}
	if cfg.MonitoringInterval == 0 {
		cfg.MonitoringInterval = DefaultMonitoringInterval
	}
	if ranker == nil {
		ranker = KubeletRanker{}
	}
	return &Default{stats: stats, pods: pods, killer: killer, reclaim: reclaim, dead: dead, ranker: ranker, events: events,
		clk: clk, log: log.WithName("eviction"), cfg: cfg, monitor: NewMonitor(policy),
		conditions: map[corev1.NodeConditionType]bool{}}, nil
}

// Run implements Manager.
func (m *Default) Run(ctx context.Context) error {
	t := m.clk.NewTicker(m.cfg.MonitoringInterval)
	defer t.Stop()
	for {
		if _, err := m.Synchronize(ctx); err != nil && ctx.Err() == nil {
			m.log.Error(err, "eviction manager: failed to synchronize")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// Conditions implements Manager.
func (m *Default) Conditions() map[corev1.NodeConditionType]bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[corev1.NodeConditionType]bool, len(m.conditions))
	for k, v := range m.conditions {
		out[k] = v
	}
	return out
}

// Synchronize is one monitoring pass: it observes the signals, updates
// the conditions and, when a threshold calls for it, reclaims node-level
// resources (for disk signals) or evicts one pod. It returns the evicted
// pod, if any. It is not safe to call concurrently with itself.
func (m *Default) Synchronize(ctx context.Context) (*corev1.Pod, error) {
	node, err := m.stats.NodeStats(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("node stats: %w", err)
	}
	d := m.monitor.Observe(m.clk.Now(), Observe(node))
	m.mu.Lock()
	m.conditions = d.Conditions
	m.mu.Unlock()
	if len(d.Act) == 0 {
		return nil, nil
	}
	th := d.Act[0]
	if m.reclaimed(ctx, th, node) {
		return nil, nil
	}
	return m.evictOne(ctx, th)
}

// reclaimed frees node-level resources for a disk signal, as the
// kubelet's reclaimNodeLevelResources: dead containers and sandboxes
// first, then unused images, except for a nodefs signal when the image
// filesystem is a filesystem of its own (removing images would not free
// nodefs). It reports whether the threshold no longer holds afterwards.
func (m *Default) reclaimed(ctx context.Context, th Threshold, node *statsapi.NodeStats) bool {
	if resourceOf[th.Signal] != corev1.ResourceEphemeralStorage && resourceOf[th.Signal] != "inodes" {
		return false
	}
	images := m.reclaim != nil && (th.Signal == SignalImageFsAvailable || th.Signal == SignalImageFsInodesFree || !dedicatedImageFs(node))
	if m.dead == nil && !images {
		return false
	}
	if m.dead != nil {
		if err := m.dead.DeleteAllUnusedContainers(ctx); err != nil {
			m.log.Error(err, "eviction manager: dead container reclaim failed")
		}
	}
	var freed uint64
	if images {
		var err error
		if freed, err = m.reclaim.DeleteUnusedImages(ctx); err != nil {
			m.log.Error(err, "eviction manager: image reclaim failed")
		}
	}
	m.log.Info("eviction manager: reclaimed node-level resources", "signal", th.Signal,
		"deadContainers", m.dead != nil, "images", images, "imageBytesFreed", freed)
	node, err := m.stats.NodeStats(ctx, false)
	if err != nil {
		return false
	}
	o, ok := Observe(node)[th.Signal]
	limit := th.Value.Amount(o.Capacity)
	if th.MinReclaim != nil {
		limit += th.MinReclaim.Amount(o.Capacity)
	}
	return ok && o.Available >= limit
}

// dedicatedImageFs reports whether the runtime's image filesystem is not
// the node's: the kubelet compares devices, the summary has none, so a
// different capacity or inode count tells them apart.
func dedicatedImageFs(node *statsapi.NodeStats) bool {
	if node == nil || node.Fs == nil || node.Runtime == nil || node.Runtime.ImageFs == nil {
		return false
	}
	n, i := node.Fs, node.Runtime.ImageFs
	differ := func(a, b *uint64) bool { return a != nil && b != nil && *a != *b }
	return differ(n.CapacityBytes, i.CapacityBytes) || differ(n.Inodes, i.Inodes)
}

// evictOne evicts the first non-critical pod in rank order.
func (m *Default) evictOne(ctx context.Context, th Threshold) (*corev1.Pod, error) {
	stats, err := m.stats.ListPodStats(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("pod stats: %w", err)
	}
	byUID := make(map[types.UID]statsapi.PodStats, len(stats))
	for _, s := range stats {
		byUID[types.UID(s.PodRef.UID)] = s
	}
	var candidates []*corev1.Pod
	for _, p := range m.pods.ActivePods() {
		if !IsCritical(p) {
			candidates = append(candidates, p)
		}
	}
	ranked := m.ranker.Rank(th.Signal, candidates, byUID)
	if len(ranked) == 0 {
		m.log.Info("eviction manager: no pod to evict", "signal", th.Signal)
		return nil, nil
	}
	pod := ranked[0]
	var ps *statsapi.PodStats
	if s, ok := byUID[pod.UID]; ok {
		ps = &s
	}
	msg := Message(th.Signal, pod, ps)
	grace := int64(immediateGracePeriod)
	if !th.Hard {
		grace = m.cfg.MaxPodGracePeriodSeconds
		if own := pod.Spec.TerminationGracePeriodSeconds; own != nil && (grace == 0 || *own < grace) {
			grace = *own
		}
	}
	m.log.Info("eviction manager: evicting pod", "pod", klog.KObj(pod), "signal", th.Signal, "gracePeriod", grace)
	m.events.Eventf(pod, corev1.EventTypeWarning, Reason, "%s", msg)
	now := m.clk.Now()
	err = m.killer.KillPod(ctx, pod, grace, func(st *corev1.PodStatus) {
		st.Phase, st.Reason, st.Message = corev1.PodFailed, Reason, msg
		setCondition(st, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "TerminationByKubelet", Message: msg, LastTransitionTime: metav1Time(now)})
	})
	if err != nil {
		return pod, fmt.Errorf("evict pod %s: %w", klog.KObj(pod), err)
	}
	return pod, nil
}

func setCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}
