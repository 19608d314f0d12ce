package cri

import (
	"fmt"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// BenchmarkGroupUnchanged measures grouping an unchanged relist of N pods
// of one sandbox and one container each, every object in the list cache.
func BenchmarkGroupUnchanged(b *testing.B) {
	const typ = "containerd"
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			sandboxes := make([]*runtimeapi.PodSandbox, n)
			containers := make([]*runtimeapi.Container, n)
			for i := range n {
				sandboxes[i] = &runtimeapi.PodSandbox{Id: fmt.Sprintf("sb-%d", i), CreatedAt: int64(1 + i), Labels: podLabels(i)}
				containers[i] = &runtimeapi.Container{
					Id: fmt.Sprintf("ct-%d", i), State: runtimeapi.ContainerState_CONTAINER_RUNNING, CreatedAt: int64(2 + i),
					Labels: podLabels(i), Metadata: &runtimeapi.ContainerMetadata{Name: "c"},
				}
			}
			var c listCache
			c.group(sandboxes, containers, typ).sorted()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				c.group(sandboxes, containers, typ).sorted()
			}
		})
	}
}
