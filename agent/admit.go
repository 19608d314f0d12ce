package agent

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// Rejection reasons, as the kubelet names them.
const reasonOutOfPods = "OutOfpods"

// admit decides whether a new pod may run on this node: today, whether the
// node still has room under MaxPods.
func (a *Agent) admit(pod *corev1.Pod) (reason, message string, ok bool) {
	active := a.activePods(pod)
	if active >= a.cfg.MaxPods {
		return reasonOutOfPods, fmt.Sprintf(
			"Node didn't have enough resource: pods, requested: 1, used: %d, capacity: %d", active, a.cfg.MaxPods), false
	}
	return "", "", true
}

// activePods counts the pods handed to workers that have not finished,
// other than pod itself.
func (a *Agent) activePods(pod *corev1.Pod) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for uid := range a.started {
		if uid == pod.UID || a.workers.IsPodKnownTerminated(uid) {
			continue
		}
		if st, ok := a.statuses.GetPodStatus(uid); ok && isTerminalPhase(st.Phase) {
			continue
		}
		n++
	}
	return n + len(a.pendingStart)
}

// reject records a pod that will not run: phase Failed with the reason.
func (a *Agent) reject(pod *corev1.Pod, reason, message string) {
	a.log.Info("Pod rejected", "pod", klog.KObj(pod), "reason", reason, "message", message)
	a.mu.Lock()
	a.rejected[pod.UID] = true
	a.mu.Unlock()
	st := pod.Status.DeepCopy()
	st.Phase = corev1.PodFailed
	st.Reason = reason
	st.Message = "Pod was rejected: " + message
	a.statuses.SetPodStatus(pod, st)
}

func (a *Agent) isRejected(uid types.UID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rejected[uid]
}
