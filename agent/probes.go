package agent

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nodekit/nodekit/managers/prober"
	"github.com/nodekit/nodekit/podworkers"
)

// livenessStopper is the optional capability of a prober.Manager that stops
// a pod's liveness and startup probes when the pod starts terminating, so
// that a failing probe does not restart a container being stopped.
type livenessStopper interface {
	StopLivenessAndStartup(pod *corev1.Pod)
}

// WithProber makes the Syncer probe pods: it adds every pod it syncs to p,
// lets p set each container's Started and Ready in the statuses it
// generates, stops the liveness and startup probes of a terminating pod and
// removes the pod from p once its containers have stopped.
func WithProber(p prober.Manager) SyncerOption {
	return func(s *Syncer) { s.prober = p }
}

// probeUpdate is how generateAPIPodStatus hands a pod's new status to the
// prober (nil without one). stored is the status the agent recorded last,
// or nil.
func (s *Syncer) probeUpdate(pod *corev1.Pod, stored *corev1.PodStatus) func(*corev1.PodStatus) {
	if s.prober == nil {
		return nil
	}
	return func(st *corev1.PodStatus) {
		prev := stored
		if prev == nil {
			prev = &pod.Status
		}
		carryStarted(st, prev)
		s.prober.UpdatePodStatus(podForProber(pod, stored), st)
	}
}

// carryStarted copies Started of each running container whose instance is
// the one prev showed: after an agent restart the prober keeps it for the
// containers it adopts, until their startup probes report.
func carryStarted(st, prev *corev1.PodStatus) {
	carry := func(list, old []corev1.ContainerStatus) {
		for i := range list {
			c := &list[i]
			if c.State.Running == nil {
				continue
			}
			if o := findStatus(old, c.Name); o != nil && o.ContainerID == c.ContainerID && o.Started != nil {
				c.Started = ptrTo(*o.Started)
			}
		}
	}
	carry(st.ContainerStatuses, prev.ContainerStatuses)
	carry(st.InitContainerStatuses, prev.InitContainerStatuses)
}

// podForProber is pod as the prober must see it: the prober keeps an
// adopted container Ready while the pod's Ready condition is true, and
// reads that condition from the pod. It is the agent's last recorded
// condition when it has one, else the pod's own (an API pod's status from
// the API server); with neither (a static pod after an agent restart) the
// pod counts as Ready, so that a container running since before the
// restart is not flipped to unready until its readiness probe says so.
func podForProber(pod *corev1.Pod, stored *corev1.PodStatus) *corev1.Pod {
	var cond *corev1.PodCondition
	if stored != nil {
		cond = findCondition(stored.Conditions, corev1.PodReady)
	} else if cond = findCondition(pod.Status.Conditions, corev1.PodReady); cond == nil {
		cond = &corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}
	}
	if cond == nil {
		cond = &corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse}
	}
	if own := findCondition(pod.Status.Conditions, corev1.PodReady); own != nil && own.Status == cond.Status {
		return pod
	}
	p := *pod
	p.Status = corev1.PodStatus{Conditions: []corev1.PodCondition{*cond}}
	return &p
}

// addToProber starts probing pod (idempotent).
func (s *Syncer) addToProber(pod *corev1.Pod) {
	if s.prober != nil {
		s.prober.AddPod(pod)
	}
}

// stopLiveness stops the liveness and startup probes of a terminating pod.
func (s *Syncer) stopLiveness(pod *corev1.Pod) {
	if ls, ok := s.prober.(livenessStopper); ok {
		ls.StopLivenessAndStartup(pod)
	}
}

// removeFromProber stops every probe of pod.
func (s *Syncer) removeFromProber(pod *corev1.Pod) {
	if s.prober != nil {
		s.prober.RemovePod(pod)
	}
}

// probeChannels are the prober's three result streams; nil channels (no
// prober, or one without results) never deliver.
type probeChannels struct {
	liveness, readiness, startup <-chan prober.Update
}

// probeChannels returns the result streams of the agent's prober, when it
// offers them (prober.ResultsProvider).
func (a *Agent) probeChannels() probeChannels {
	rp, ok := a.prober.(prober.ResultsProvider)
	if !ok || rp == nil {
		return probeChannels{}
	}
	return probeChannels{
		liveness: rp.Liveness().Updates(), readiness: rp.Readiness().Updates(), startup: rp.Startup().Updates(),
	}
}

// handleProbeUpdate syncs the pod of a probe result that matters: a
// liveness failure (the runtime kills and restarts the container), any
// readiness or startup change (the status is regenerated; a failed startup
// probe also restarts the container).
func (a *Agent) handleProbeUpdate(u prober.Update) {
	if u.Probe == prober.Liveness && u.Result != prober.Failure {
		return
	}
	pod := a.registry.Get(u.PodUID)
	if pod == nil || a.isRejected(pod.UID) || a.isPending(pod.UID) {
		return
	}
	a.log.V(2).Info("Probe result changed", "pod", klog.KObj(pod), "probe", u.Probe.String(), "result", u.Result.String(), "containerID", u.ContainerID)
	a.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodSync, Pod: pod, MirrorPod: a.mirrorOf(pod)})
}

// cleanupProbes stops probing the pods whose workers have terminated or
// are gone.
func (a *Agent) cleanupProbes(known map[types.UID]podworkers.PodWorkerSync) {
	if a.prober == nil {
		return
	}
	desired := make(map[types.UID]bool, len(known))
	for uid, w := range known {
		if w.State != podworkers.TerminatedPod {
			desired[uid] = true
		}
	}
	a.prober.CleanupPods(desired)
}

// runProber runs the prober, when the agent has one.
func (a *Agent) runProber(ctx context.Context) error {
	if a.prober == nil {
		return nil
	}
	return a.prober.Run(ctx)
}
