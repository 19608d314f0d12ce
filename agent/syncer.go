package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/managers/nodeip"
	"github.com/nodekit/nodekit/managers/prober"
	"github.com/nodekit/nodekit/managers/volumes"
	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Syncer is the agent's podworkers.SyncHandler: it turns a pod and its
// runtime status into runtime actions and an API status. It is safe for
// concurrent use by different pods.
type Syncer struct {
	rt       noderuntime.Runtime
	statuses StatusStore
	requeue  Requeuer
	mirrors  MirrorClient
	prober   prober.Manager  // nil: no probes
	volumes  volumes.Manager // nil: the runtime gets no volumes
	nodeIPs  nodeip.Source   // nil: Config.NodeIP
	clk      clock.Clock
	log      logr.Logger
	cfg      Config

	mu        sync.Mutex
	reasons   map[types.UID]map[string]waitingReason
	ran       map[types.UID]bool      // pods already reported running once
	firstSync map[types.UID]time.Time // pods' first syncs

	startDuration prometheus.Histogram // nil: no metrics
}

// Requeuer schedules a pod's next sync; podworkers.WorkQueue implements it.
type Requeuer interface {
	// Enqueue asks for a sync of the pod after delay.
	Enqueue(uid types.UID, delay time.Duration)
}

var (
	_ podworkers.SyncHandler     = (*Syncer)(nil)
	_ podworkers.PodStatusReader = (*Syncer)(nil)
)

// NewSyncer returns a Syncer that drives rt and records statuses in statuses.
// requeue may be nil; it is used to sync a pod again when its containers'
// restart backoff ends. Options add optional collaborators.
func NewSyncer(rt noderuntime.Runtime, statuses StatusStore, requeue Requeuer, clk clock.Clock, log logr.Logger, cfg Config, opts ...SyncerOption) *Syncer {
	s := &Syncer{
		rt: rt, statuses: statuses, requeue: requeue, clk: clk,
		log: log.WithName("sync"), cfg: cfg.withDefaults(),
		reasons: map[types.UID]map[string]waitingReason{},
		ran:     map[types.UID]bool{}, firstSync: map[types.UID]time.Time{},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// SyncerOption configures an optional collaborator of a Syncer.
type SyncerOption func(*Syncer)

// WithMirrorClient makes the Syncer keep a mirror pod in the API server for
// every static pod.
func WithMirrorClient(m MirrorClient) SyncerOption {
	return func(s *Syncer) { s.mirrors = m }
}

// WithNodeIPs makes the Syncer report src's addresses as the pods'
// hostIP(s) and as the podIP(s) of hostNetwork pods, instead of
// Config.NodeIP, so that they agree with the node's status and the
// downward API. While src knows no address, pods report no hostIP.
func WithNodeIPs(src nodeip.Source) SyncerOption {
	return func(s *Syncer) { s.nodeIPs = src }
}

// WithVolumes makes the Syncer set up every pod's volumes before the
// runtime starts its containers, and tear them down once it has stopped.
func WithVolumes(v volumes.Manager) SyncerOption {
	return func(s *Syncer) { s.volumes = v }
}

// SyncPod implements podworkers.SyncHandler: it records the pod's status and,
// unless the pod has finished, sets up its volumes and asks the runtime to
// make it run. A volume that cannot be set up yet leaves the pod Pending
// (its containers waiting in ContainerCreating) and is an error, so that
// the pod is synced again after the workers' backoff. A container
// waiting out its restart backoff is not an error: the pod is synced again
// when the backoff ends.
func (s *Syncer) SyncPod(ctx context.Context, _ podworkers.UpdateType, pod, mirror *corev1.Pod, status *noderuntime.PodStatus) (bool, error) {
	s.syncMirror(ctx, pod, mirror)
	s.noteSync(pod.UID)
	s.addToProber(pod)
	apiStatus := s.generate(pod, status, false)
	s.setStatus(pod, apiStatus)
	if isTerminalPhase(apiStatus.Phase) {
		s.log.V(2).Info("Pod has finished", "pod", klog.KObj(pod), "phase", apiStatus.Phase)
		return true, nil
	}
	if s.volumes != nil {
		if err := s.volumes.SetUpPod(ctx, pod); err != nil {
			return false, fmt.Errorf("unable to attach or mount volumes of pod %s: %w", klog.KObj(pod), err)
		}
	}
	result := s.rt.SyncPod(ctx, pod, status)
	s.recordReasons(pod, result)
	switch {
	case changedRuntime(result):
		s.refreshStatus(ctx, pod)
	case result.Error() != nil:
		// Show why a container did not start (CrashLoopBackOff, an image
		// error) now, not at the next sync.
		s.setStatus(pod, s.generate(pod, status, false))
	}
	err := result.Error()
	if err == nil {
		return false, nil
	}
	if result.OnlyBackOff() {
		if d := result.RetryAfter(); d > 0 && s.requeue != nil {
			s.requeue.Enqueue(pod.UID, d)
		}
		return false, nil
	}
	return false, fmt.Errorf("sync pod %s: %w", klog.KObj(pod), err)
}

// changedRuntime reports whether a sync started or stopped anything.
func changedRuntime(r *noderuntime.SyncResult) bool {
	for _, s := range r.Steps {
		if s.Err == nil && s.Action != noderuntime.PullImage {
			return true
		}
	}
	return false
}

// refreshStatus records the pod's status right after a sync changed its
// containers, instead of waiting for the PLEG's next relist to show it: one
// inspection makes a started pod visible as running up to a relist period
// sooner than the kubelet shows it. The PLEG cache is left to the PLEG.
func (s *Syncer) refreshStatus(ctx context.Context, pod *corev1.Pod) {
	fresh, err := s.rt.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		s.log.V(4).Info("Could not refresh pod status after sync", "pod", klog.KObj(pod), "err", err)
		return
	}
	s.setStatus(pod, s.generate(pod, fresh, false))
}

// SyncTerminatingPod implements podworkers.SyncHandler: it stops every
// container of the pod within gracePeriod and records the final status.
func (s *Syncer) SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, status *noderuntime.PodStatus, gracePeriod *int64, statusFn func(*corev1.PodStatus)) error {
	log := s.log.WithValues("pod", klog.KObj(pod), "podUID", pod.UID)
	log.V(2).Info("Stopping pod", "gracePeriod", derefOr(gracePeriod, -1))
	s.stopLiveness(pod)
	if err := s.rt.KillPod(ctx, pod, status.ToPod(), gracePeriod); err != nil {
		return fmt.Errorf("kill pod %s: %w", klog.KObj(pod), err)
	}
	s.removeFromProber(pod)
	stopped, err := s.rt.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		return fmt.Errorf("read status of stopped pod %s: %w", klog.KObj(pod), err)
	}
	if running := stopped.GetRunningContainerStatuses(); len(running) > 0 {
		return fmt.Errorf("pod %s still has %d running containers after kill", klog.KObj(pod), len(running))
	}
	apiStatus := s.generate(pod, stopped, true)
	if statusFn != nil {
		statusFn(apiStatus)
	}
	s.setStatus(pod, apiStatus)
	log.V(2).Info("Pod stopped", "phase", apiStatus.Phase)
	return nil
}

// GetPodStatus implements podworkers.PodStatusReader: it reads the pod's
// status from the runtime, for a terminating pod whose PLEG cache entry does
// not get fresher (the relists fail).
func (s *Syncer) GetPodStatus(ctx context.Context, uid types.UID, name, namespace string) (*noderuntime.PodStatus, error) {
	status, err := s.rt.GetPodStatus(ctx, uid, name, namespace)
	if err != nil {
		return nil, fmt.Errorf("status of pod %s from the runtime: %w", klog.KRef(namespace, name), err)
	}
	return status, nil
}

// SyncTerminatingRuntimePod implements podworkers.SyncHandler: it stops a pod
// that only the runtime knows, with the shortest grace period.
func (s *Syncer) SyncTerminatingRuntimePod(ctx context.Context, runningPod *noderuntime.Pod) error {
	grace := int64(1)
	s.log.V(2).Info("Stopping orphaned pod", "pod", klog.KRef(runningPod.Namespace, runningPod.Name), "podUID", runningPod.ID)
	if err := s.rt.KillPod(ctx, nil, runningPod, &grace); err != nil {
		return fmt.Errorf("kill orphaned pod %s/%s (%s): %w", runningPod.Namespace, runningPod.Name, runningPod.ID, err)
	}
	return nil
}

// SyncTerminatedPod implements podworkers.SyncHandler: it records the final
// status of a pod whose containers have stopped, tears down its volumes and
// forgets its reasons.
func (s *Syncer) SyncTerminatedPod(ctx context.Context, pod *corev1.Pod, status *noderuntime.PodStatus) error {
	s.removeFromProber(pod)
	if s.volumes != nil {
		if err := s.volumes.TearDownPod(ctx, pod); err != nil {
			return fmt.Errorf("tear down volumes of pod %s: %w", klog.KObj(pod), err)
		}
	}
	s.setStatus(pod, s.generate(pod, status, true))
	s.mu.Lock()
	delete(s.reasons, pod.UID)
	delete(s.ran, pod.UID)
	delete(s.firstSync, pod.UID)
	s.mu.Unlock()
	return nil
}

func (s *Syncer) generate(pod *corev1.Pod, status *noderuntime.PodStatus, terminal bool) *corev1.PodStatus {
	old, _ := s.statuses.GetPodStatus(pod.UID)
	s.mu.Lock()
	waiting := s.reasons[pod.UID]
	s.mu.Unlock()
	st := generateAPIPodStatus(statusInput{
		pod: pod, runtime: status, old: old, waiting: waiting,
		terminal: terminal, nodeIPs: s.nodeIPList(), now: s.clk.Now(),
		probe: s.probeUpdate(pod, old),
	})
	// As the kubelet's pod sync handlers: a pod past its active deadline
	// fails, whatever its containers say, and SyncPod then has it killed;
	// a pod that succeeded keeps its phase (no pod leaves a terminal phase).
	if old != nil && old.Phase == corev1.PodSucceeded {
		return st
	}
	if reason, message, evict := (activeDeadline{statuses: s.statuses, clk: s.clk}).shouldEvict(pod); evict {
		st.Phase, st.Reason, st.Message = corev1.PodFailed, reason, message
	}
	return st
}

// nodeIPList is the node's addresses for the pod status; none while they
// are unknown (the source logs why).
func (s *Syncer) nodeIPList() []string {
	if s.nodeIPs == nil {
		if s.cfg.NodeIP == "" {
			return nil
		}
		return []string{s.cfg.NodeIP}
	}
	ips, err := s.nodeIPs.NodeIPs()
	if err != nil {
		s.log.V(4).Info("Node IP unknown, pods get no hostIP", "err", err)
		return nil
	}
	return ips
}

// recordReasons keeps why each container failed to start in the last sync,
// so the next status shows it waiting with that reason (CrashLoopBackOff).
func (s *Syncer) recordReasons(pod *corev1.Pod, result *noderuntime.SyncResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	reasons := s.reasons[pod.UID]
	for _, step := range result.Steps {
		if step.Action != noderuntime.StartContainer && step.Action != noderuntime.PullImage {
			continue
		}
		if step.Err == nil {
			delete(reasons, step.Target)
			continue
		}
		if reasons == nil {
			reasons = map[string]waitingReason{}
			s.reasons[pod.UID] = reasons
		}
		reason, msg := result.Waiting(step.Target)
		reasons[step.Target] = waitingReason{Reason: reason, Message: msg}
	}
}

func derefOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
