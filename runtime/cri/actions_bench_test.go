package cri

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// BenchmarkComputePodActions measures deciding the actions for one running,
// unchanged two-container pod: the cost every sync of a steady pod pays.
func BenchmarkComputePodActions(b *testing.B) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid"},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways, Containers: []corev1.Container{
			{Name: "a", Image: "img:1", Command: []string{"sh", "-c", "sleep 3600"}},
			{Name: "b", Image: "img:1", Env: []corev1.EnvVar{{Name: "X", Value: "1"}}},
		}},
	}
	status := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: []*runtimeapi.PodSandboxStatus{sb("sb", 0, true)},
		ContainerStatuses: []*noderuntime.ContainerStatus{
			cs(pod, "a", noderuntime.ContainerStateRunning, 0),
			cs(pod, "b", noderuntime.ContainerStateRunning, 0),
		}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := computePodActions(pod, status, nil)
		if a.KillPod || len(a.ContainersToStart) != 0 {
			b.Fatalf("unexpected actions %s", a)
		}
	}
}
