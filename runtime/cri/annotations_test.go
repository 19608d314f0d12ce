package cri

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestSandboxAnnotationsLeaveOutLargeValues: a pod's 250,000-byte
// annotation (within the API's limit) and kubectl's last-applied copy stay
// off the sandbox, whose annotations every ListPodSandbox answer carries;
// the small ones a runtime or CNI plugin reads reach it unchanged.
func TestSandboxAnnotationsLeaveOutLargeValues(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("uid-ann", "app")
	pod.Annotations = map[string]string{
		"example.com/blob":                                  strings.Repeat("x", 250_000),
		corev1.LastAppliedConfigAnnotation:                  `{"kind":"Pod"}`,
		"kubernetes.io/ingress-bandwidth":                   "10M",
		"io.katacontainers.config.hypervisor.default_vcpus": "2",
		"example.com/edge":                                  strings.Repeat("e", MaxSandboxAnnotationValue),
	}
	if r := e.sync(t, pod); r.Error() != nil {
		t.Fatalf("SyncPod: %v", r.Error())
	}
	got := e.rs.sandboxConfigs[0].GetAnnotations()
	want := map[string]string{
		"kubernetes.io/ingress-bandwidth":                   "10M",
		"io.katacontainers.config.hypervisor.default_vcpus": "2",
		"example.com/edge":                                  pod.Annotations["example.com/edge"],
	}
	if len(got) != len(want) {
		t.Fatalf("sandbox annotations %v, want the keys of %v", keysOf(got), keysOf(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("sandbox annotation %q = %.20q, want %.20q", k, got[k], v)
		}
	}
	if len(pod.Annotations) != 5 {
		t.Errorf("the pod's own annotations changed: %v", keysOf(pod.Annotations))
	}
}

// TestSandboxAnnotationsTotalBounded: many values each under the per-value
// limit are copied smallest first only while their total fits.
func TestSandboxAnnotationsTotalBounded(t *testing.T) {
	pod := newPod("uid-many")
	pod.Annotations = map[string]string{"small": "1"}
	for i := range 10 {
		pod.Annotations[fmt.Sprintf("big-%d", i)] = strings.Repeat("v", 6000+i)
	}
	got := sandboxAnnotations(pod)
	total := 0
	for k, v := range got {
		total += len(k) + len(v)
	}
	if total > MaxSandboxAnnotationsSize {
		t.Errorf("copied %d bytes of annotations, limit %d", total, MaxSandboxAnnotationsSize)
	}
	// 1 + 5 values of 6,000..6,004 bytes fit in 32 KiB, a sixth does not.
	for _, k := range []string{"small", "big-0", "big-1", "big-2", "big-3", "big-4"} {
		if _, ok := got[k]; !ok {
			t.Errorf("annotation %q left out; kept %v", k, keysOf(got))
		}
	}
	if len(got) != 6 {
		t.Errorf("kept %v, want small and big-0..big-4", keysOf(got))
	}
}

func keysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
