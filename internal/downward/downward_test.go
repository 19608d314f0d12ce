package downward

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFieldValue(t *testing.T) {
	t.Parallel()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u",
			Labels: map[string]string{"b": "2", "a": "1"}, Annotations: map[string]string{"q": `say "hi"`}},
		Spec: corev1.PodSpec{NodeName: "n", ServiceAccountName: "sa"},
	}
	addrs := Addresses{PodIPs: []string{"10.0.0.1", "fd00::1"}, HostIPs: []string{"192.0.2.1"}}
	for path, want := range map[string]string{
		"metadata.name": "p", "metadata.namespace": "ns", "metadata.uid": "u",
		"metadata.labels['a']": "1", "metadata.labels['missing']": "", "metadata.annotations['q']": `say "hi"`,
		"metadata.labels": "a=\"1\"\nb=\"2\"", "metadata.annotations": `q="say \"hi\""`,
		"spec.nodeName": "n", "spec.serviceAccountName": "sa",
		"status.podIP": "10.0.0.1", "status.podIPs": "10.0.0.1,fd00::1", "status.hostIP": "192.0.2.1", "status.hostIPs": "192.0.2.1",
	} {
		got, err := FieldValue(pod, path, addrs)
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := FieldValue(pod, "status.hostIP", Addresses{}); err == nil {
		t.Error("status.hostIP without host IPs: nil error")
	}
	if _, err := FieldValue(pod, "spec.hostname", addrs); err == nil {
		t.Error("an unsupported path: nil error")
	}
}

func TestResourceValueRoundsUpAndDefaultsLimits(t *testing.T) {
	t.Parallel()
	q := resource.MustParse
	c := corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: q("1m"), "hugepages-2Mi": q("4Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: q("0")},
	}}
	pod := &corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{c}}}
	alloc := corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("1Gi")}
	for _, tc := range []struct{ res, div, want string }{
		{"requests.cpu", "1", "1"},       // 1m rounds up to 1 core
		{"limits.cpu", "1m", "2000"},     // allocatable
		{"limits.memory", "1Mi", "1024"}, // a zero limit is unset
		{"requests.hugepages-2Mi", "1Mi", "4"},
		{"limits.ephemeral-storage", "1", "0"}, // neither set nor allocatable
	} {
		fs := &corev1.ResourceFieldSelector{Resource: tc.res, Divisor: q(tc.div), ContainerName: "c"}
		got, err := ResourceValue(fs, pod, nil, alloc)
		if err != nil || got != tc.want {
			t.Errorf("%s / %s = %q, %v; want %q", tc.res, tc.div, got, err, tc.want)
		}
	}
	if _, err := ResourceValue(&corev1.ResourceFieldSelector{Resource: "cpu"}, pod, &c, alloc); err == nil {
		t.Error("a resource without limits./requests.: nil error")
	}
}
