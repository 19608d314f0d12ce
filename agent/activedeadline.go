package agent

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// The reason and message of a pod stopped by spec.activeDeadlineSeconds, as
// the kubelet gives them.
const (
	reasonDeadlineExceeded  = "DeadlineExceeded"
	messageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"
)

// activeDeadline enforces spec.activeDeadlineSeconds as the kubelet's
// activeDeadlineHandler does: a pod that has been active on the node (since
// its status' startTime) for at least its deadline is synced again by the
// sync loop, and its status becomes phase Failed with reason
// DeadlineExceeded, which makes its worker kill it.
type activeDeadline struct {
	statuses StatusStore
	clk      clock.PassiveClock
}

// pastDeadline reports whether the pod has run out its active deadline. The
// start time comes from the latest recorded status, else the pod's own; a
// pod without a start time has not started its deadline.
func (d activeDeadline) pastDeadline(pod *corev1.Pod) bool {
	if pod.Spec.ActiveDeadlineSeconds == nil {
		return false
	}
	status := &pod.Status
	if d.statuses != nil {
		if st, ok := d.statuses.GetPodStatus(pod.UID); ok && st != nil {
			status = st
		}
	}
	if status.StartTime == nil || status.StartTime.IsZero() {
		return false
	}
	allowed := time.Duration(*pod.Spec.ActiveDeadlineSeconds) * time.Second
	return d.clk.Since(status.StartTime.Time) >= allowed
}

// shouldEvict returns the reason and message of the pod's failure when it
// is past its deadline.
func (d activeDeadline) shouldEvict(pod *corev1.Pod) (reason, message string, evict bool) {
	if !d.pastDeadline(pod) {
		return "", "", false
	}
	return reasonDeadlineExceeded, messageDeadlineExceeded, true
}
