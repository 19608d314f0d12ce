package eviction

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Reason is the evicted pod's status reason, the kubelet's.
const Reason = "Evicted"

// resourceOf is the resource each signal reclaims, as messages name it.
var resourceOf = map[Signal]corev1.ResourceName{
	SignalMemoryAvailable: corev1.ResourceMemory,
	SignalNodeFsAvailable: corev1.ResourceEphemeralStorage, SignalImageFsAvailable: corev1.ResourceEphemeralStorage,
	SignalNodeFsInodesFree: "inodes", SignalImageFsInodesFree: "inodes",
	SignalPIDAvailable: "pids",
}

// Message is the kubelet's eviction message: the resource the node was
// low on, then each container whose usage of it exceeds its request.
func Message(signal Signal, pod *corev1.Pod, stats *statsapi.PodStats) string {
	res := resourceOf[signal]
	msg := fmt.Sprintf("The node was low on resource: %v. ", res)
	if stats == nil || (res != corev1.ResourceMemory && res != corev1.ResourceEphemeralStorage) {
		return msg
	}
	for _, c := range pod.Spec.Containers {
		var used int64
		found := false
		for _, cs := range stats.Containers {
			if cs.Name != c.Name {
				continue
			}
			switch res {
			case corev1.ResourceMemory:
				if cs.Memory != nil && cs.Memory.WorkingSetBytes != nil {
					used, found = int64(*cs.Memory.WorkingSetBytes), true
				}
			case corev1.ResourceEphemeralStorage:
				if cs.Rootfs != nil && cs.Rootfs.UsedBytes != nil {
					used, found = int64(*cs.Rootfs.UsedBytes), true
				}
				if cs.Logs != nil && cs.Logs.UsedBytes != nil {
					used, found = used+int64(*cs.Logs.UsedBytes), true
				}
			}
		}
		req := c.Resources.Requests[res]
		if found && used > req.Value() {
			msg += fmt.Sprintf("Container %s was using %s, request is %s, has larger consumption of %v. ",
				c.Name, quantity(used), req.String(), res)
		}
	}
	return msg
}

func metav1Time(t time.Time) metav1.Time { return metav1.NewTime(t) }
