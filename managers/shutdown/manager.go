package shutdown

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// rewatchPeriod is how long Run waits before watching again after the
// trigger stopped, as the kubelet's D-Bus reconnect period.
const rewatchPeriod = time.Second

var _ Manager = (*Default)(nil)

// Default is the kubelet's node shutdown manager.
type Default struct {
	pods    PodLister
	killer  PodKiller
	trigger Trigger
	events  noderuntime.EventRecorder
	clk     clock.WithTicker
	log     logr.Logger
	cfg     Config
	groups  []Group
	metrics *metrics

	changed chan struct{}

	mu           sync.Mutex
	shuttingDown bool
}

// NewDefault returns the manager; cfg must be valid. It registers the
// kubelet's graceful shutdown gauges on reg (nil: none). It does no I/O.
func NewDefault(pods PodLister, killer PodKiller, trigger Trigger, events noderuntime.EventRecorder,
	clk clock.WithTicker, reg prometheus.Registerer, log logr.Logger, cfg Config) (*Default, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Default{pods: pods, killer: killer, trigger: trigger, events: events, clk: clk,
		log: log.WithName("shutdown"), cfg: cfg, groups: cfg.Groups(), metrics: newMetrics(reg),
		changed: make(chan struct{}, 1)}, nil
}

// ShutdownStatus implements Manager.
func (m *Default) ShutdownStatus() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shuttingDown {
		return ErrShuttingDown
	}
	return nil
}

// Admit implements Manager.
func (m *Default) Admit(*corev1.Pod) (string, string, bool) {
	if m.ShutdownStatus() != nil {
		return NotAdmittedReason, NotAdmittedMessage, false
	}
	return "", "", true
}

// Changed implements Manager.
func (m *Default) Changed() <-chan struct{} { return m.changed }

// Run implements Manager. With graceful shutdown off it only waits for
// ctx; when the trigger is unavailable it logs why and waits for ctx.
func (m *Default) Run(ctx context.Context) error {
	if len(m.groups) == 0 {
		m.log.Info("No graceful shutdown configured; node shutdown will be immediate")
		<-ctx.Done()
		return nil
	}
	m.log.Info("Starting node shutdown manager", "shutdownGracePeriod", m.cfg.GracePeriod,
		"shutdownGracePeriodCriticalPods", m.cfg.GracePeriodCriticalPods, "groups", len(m.groups))
	if st, err := m.loadState(); err != nil {
		m.log.Error(err, "Failed to load graceful shutdown state")
	} else {
		m.metrics.set(st)
	}
	for {
		events, err := m.trigger.Watch(ctx)
		if err != nil {
			m.log.Error(err, "Cannot watch the node for shutdown events; node shutdown will be immediate")
			if errors.Is(err, ErrUnavailable) {
				<-ctx.Done()
				return nil
			}
		} else {
			m.watch(ctx, events)
		}
		if ctx.Err() != nil {
			return nil
		}
		t := m.clk.NewTimer(rewatchPeriod)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
			m.log.V(1).Info("Restarting watch for node shutdown events")
		}
	}
}

// watch handles the trigger's events until its channel closes or ctx ends.
func (m *Default) watch(ctx context.Context, events <-chan bool) {
	for {
		select {
		case <-ctx.Done():
			return
		case down, ok := <-events:
			if !ok {
				return
			}
			m.handle(ctx, down)
		}
	}
}

// handle is one announcement: a shutdown (down) or its cancellation.
func (m *Default) handle(ctx context.Context, down bool) {
	m.mu.Lock()
	was := m.shuttingDown
	m.shuttingDown = down
	m.mu.Unlock()
	if was != down {
		select {
		case m.changed <- struct{}{}:
		default:
		}
	}
	if !down {
		m.log.Info("Shutdown manager detected shutdown cancellation")
		m.events.Eventf(m.nodeRef(), corev1.EventTypeNormal, EventReason, "Shutdown manager detected shutdown cancellation")
		return
	}
	m.log.Info("Shutdown manager detected shutdown event")
	m.events.Eventf(m.nodeRef(), corev1.EventTypeNormal, EventReason, "Shutdown manager detected shutdown event")
	st := state{StartTime: m.clk.Now()}
	m.recordState(st)
	m.Terminate(ctx, m.pods.ActivePods())
	st.EndTime = m.clk.Now()
	m.recordState(st)
	if err := m.trigger.Release(); err != nil {
		m.log.Error(err, "Cannot release the shutdown inhibitor")
	}
	m.log.Info("Shutdown manager completed processing shutdown event, node will shutdown shortly")
}

// Terminate kills pods group by group, lowest priority first: every pod
// of a group at once with GracePeriod, then it waits until they all have
// terminated or the group's period has passed (then it stops waiting for
// them: they keep terminating) before the next group. It blocks; it
// returns early when ctx ends. pods are not changed.
func (m *Default) Terminate(ctx context.Context, pods []*corev1.Pod) {
	for _, g := range GroupPods(m.groups, pods) {
		if len(g.Pods) == 0 || ctx.Err() != nil {
			continue
		}
		m.terminateGroup(ctx, g)
	}
}

func (m *Default) terminateGroup(ctx context.Context, g Group) {
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, pod := range g.Pods {
		grace := GracePeriod(pod, g)
		m.log.V(1).Info("Shutdown manager killing pod with gracePeriod", "pod", klog.KObj(pod), "gracePeriod", grace)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.killer.KillPod(gctx, pod, grace, m.terminatedStatus(pod)); err != nil {
				m.log.V(1).Info("Shutdown manager failed killing pod", "pod", klog.KObj(pod), "err", err)
				return
			}
			m.log.V(1).Info("Shutdown manager finished killing pod", "pod", klog.KObj(pod))
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := m.clk.NewTimer(time.Duration(g.GracePeriodSeconds) * time.Second)
	defer t.Stop()
	select {
	case <-done:
		m.log.V(1).Info("Done waiting for all pods in group to terminate", "gracePeriod", g.GracePeriodSeconds, "priority", g.Priority)
	case <-t.C():
		m.log.V(1).Info("Shutdown manager pod killing time out", "gracePeriod", g.GracePeriodSeconds, "priority", g.Priority)
	case <-ctx.Done():
	}
	cancel()
	<-done // the killers return once gctx ends
}

// terminatedStatus is the final status of a pod killed for the shutdown,
// as the kubelet writes it.
func (m *Default) terminatedStatus(pod *corev1.Pod) func(*corev1.PodStatus) {
	now := metav1.NewTime(m.clk.Now())
	generation := pod.Generation
	return func(st *corev1.PodStatus) {
		if st.Phase != corev1.PodSucceeded {
			st.Phase = corev1.PodFailed
		}
		st.Reason, st.Message = Reason, Message
		setCondition(st, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			ObservedGeneration: generation, Reason: corev1.PodReasonTerminationByKubelet, Message: Message,
			LastTransitionTime: now})
	}
}

// setCondition puts c into st, keeping the transition time of a condition
// of the same type and status.
func setCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	for i := range st.Conditions {
		if st.Conditions[i].Type != c.Type {
			continue
		}
		if st.Conditions[i].Status == c.Status {
			c.LastTransitionTime = st.Conditions[i].LastTransitionTime
		}
		st.Conditions[i] = c
		return
	}
	st.Conditions = append(st.Conditions, c)
}

// nodeRef is the node as events name it, as the kubelet's nodeRef.
func (m *Default) nodeRef() *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Node", Name: m.cfg.NodeName, UID: types.UID(m.cfg.NodeName)}
}
