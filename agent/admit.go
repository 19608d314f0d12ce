package agent

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// Rejection reasons, as the kubelet names them.
const reasonOutOfPods = "OutOfpods"

// admit decides whether a new pod may run on this node, given how many
// pods are active: today, whether the node still has room under MaxPods.
func (a *Agent) admit(active int) (reason, message string, ok bool) {
	if active >= a.cfg.MaxPods {
		return reasonOutOfPods, fmt.Sprintf(
			"Node didn't have enough resource: pods, requested: 1, used: %d, capacity: %d", active, a.cfg.MaxPods), false
	}
	return "", "", true
}

// activePods counts the pods handed to workers that have not finished, and
// the static pods waiting to start.
func (a *Agent) activePods() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for uid := range a.started {
		if a.workers.IsPodKnownTerminated(uid) {
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
