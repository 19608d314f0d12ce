package eviction

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestAdmitUnderPressure(t *testing.T) {
	t.Parallel()
	be := pod("be", 0, "")
	burst := pod("burst", 0, "10Mi")
	tolerant := pod("tolerant", 0, "")
	tolerant.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	static := pod("static", 0, "")
	static.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	mem := map[corev1.NodeConditionType]bool{corev1.NodeMemoryPressure: true}
	disk := map[corev1.NodeConditionType]bool{corev1.NodeDiskPressure: true, corev1.NodeMemoryPressure: false}
	both := map[corev1.NodeConditionType]bool{corev1.NodeDiskPressure: true, corev1.NodeMemoryPressure: true}
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		conds   map[corev1.NodeConditionType]bool
		message string // "" when admitted
	}{
		{"no pressure admits a BestEffort pod", be, nil, ""},
		{"memory pressure refuses a BestEffort pod", be, mem, "The node had condition: [MemoryPressure]. "},
		{"memory pressure admits a Burstable pod", burst, mem, ""},
		{"memory pressure admits a BestEffort pod tolerating its taint", tolerant, mem, ""},
		{"disk pressure refuses a Burstable pod", burst, disk, "The node had condition: [DiskPressure]. "},
		{"memory and disk pressure refuse a Burstable pod", burst, both, "The node had condition: [DiskPressure MemoryPressure]. "},
		{"PID pressure refuses a Burstable pod", burst, map[corev1.NodeConditionType]bool{corev1.NodePIDPressure: true}, "The node had condition: [PIDPressure]. "},
		{"a static pod is always admitted", static, both, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, message, ok := Admit(tc.pod, tc.conds)
			if ok != (tc.message == "") || message != tc.message || (!ok && reason != "Evicted") {
				t.Fatalf("Admit = %q, %q, %v; want message %q", reason, message, ok, tc.message)
			}
		})
	}
}
