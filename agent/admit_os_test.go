package agent

import (
	goruntime "runtime"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/agent/admission"
)

func TestAdmissionRefusesPodsForAnotherOS(t *testing.T) {
	t.Parallel()
	other := corev1.Windows
	if goruntime.GOOS == string(corev1.Windows) {
		other = corev1.Linux
	}
	withOS := func(name corev1.OSName) *corev1.Pod {
		pod := staticPod("a", "a")
		pod.Spec.OS = &corev1.PodOS{Name: name}
		return pod
	}
	withLabel := func(os string) *corev1.Pod {
		pod := staticPod("a", "a")
		pod.Labels = map[string]string{corev1.LabelOSStable: os}
		return pod
	}
	withSelector := staticPod("a", "a")
	withSelector.Spec.NodeSelector = map[string]string{corev1.LabelOSStable: string(other)}
	cases := []struct {
		name    string
		pod     *corev1.Pod
		reason  string
		message string
	}{
		{"no OS is admitted", staticPod("a", "a"), "", ""},
		{"the node's OS is admitted", withOS(corev1.OSName(goruntime.GOOS)), "", ""},
		{"another OS is refused", withOS(other), "PodOSNotSupported", "Failed to admit pod as the OS field doesn't match node OS"},
		{"the node's OS label is admitted", withLabel(goruntime.GOOS), "", ""},
		{"another OS label is refused", withLabel(string(other)), "PodOSSelectorNodeLabelDoesNotMatch",
			"Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"},
		// As the kubelet, which reads the pod's labels: the scheduler
		// owns nodeSelector.
		{"a nodeSelector is not admission's", withSelector, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reason, message, ok := admitOS(tc.pod)
			if ok != (tc.reason == "") || reason != tc.reason || message != tc.message {
				t.Fatalf("admitOS = %q, %q, %v; want %q, %q", reason, message, ok, tc.reason, tc.message)
			}
		})
	}
	chain := DefaultAdmission(nil, Config{MaxPods: 10}, logr.Discard())
	if r := chain.Admit(&admission.Attributes{Pod: withOS(other)}); r.Admit || r.Reason != "PodOSNotSupported" {
		t.Fatalf("the default chain: %+v; want PodOSNotSupported", r)
	}
}
