package eviction

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
)

// Admit is the kubelet's admission under pressure, given the pressure
// conditions that hold: with none, or for a critical pod, it admits; with
// MemoryPressure alone it refuses only BestEffort pods that do not
// tolerate the node.kubernetes.io/memory-pressure NoSchedule taint; with
// DiskPressure or PIDPressure it refuses every pod that is not critical.
// A refusal has reason Evicted and the message "The node had condition:
// [MemoryPressure]. ".
func Admit(pod *corev1.Pod, conditions map[corev1.NodeConditionType]bool) (reason, message string, ok bool) {
	var held []string
	for c, on := range conditions {
		if on {
			held = append(held, string(c))
		}
	}
	if len(held) == 0 || IsCritical(pod) {
		return "", "", true
	}
	sort.Strings(held)
	if len(held) == 1 && held[0] == string(corev1.NodeMemoryPressure) {
		if !bestEffort(pod) {
			return "", "", true
		}
		taint := &corev1.Taint{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}
		if corev1helpers.TolerationsTolerateTaint(klog.Background(), pod.Spec.Tolerations, taint, false) {
			return "", "", true
		}
	}
	return Reason, fmt.Sprintf("The node had condition: %v. ", held), false
}

// bestEffort reports whether no container asks for cpu or memory.
func bestEffort(pod *corev1.Pod) bool {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass == corev1.PodQOSBestEffort
	}
	all := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range all {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := c.Resources.Requests[name]; ok && !q.IsZero() {
				return false
			}
			if q, ok := c.Resources.Limits[name]; ok && !q.IsZero() {
				return false
			}
		}
	}
	return true
}
