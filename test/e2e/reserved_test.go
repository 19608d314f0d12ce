//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodekit/nodekit"
)

// TestAllocatableIsCapacityLessReservedAndHardThresholds joins a node with
// kube-reserved, system-reserved and hard eviction thresholds, checks that
// its allocatable in the API is its capacity less them, and that a static
// pod requesting more memory than allocatable (but less than capacity) is
// refused with OutOfmemory.
func TestAllocatableIsCapacityLessReservedAndHardThresholds(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	h.joinCluster(c)
	h.startWith(func(cfg *nodekit.Config) {
		cfg.KubeReserved = map[string]string{"cpu": "500m", "memory": "300Mi", "pid": "100"}
		cfg.SystemReserved = map[string]string{"memory": "200Mi", "ephemeral-storage": "1Gi"}
		cfg.EvictionHard = "memory.available<150Mi,nodefs.available<5%"
	})
	var node *corev1.Node
	for deadline := time.Now().Add(settle); node == nil; {
		n, err := c.admin.CoreV1().Nodes().Get(context.Background(), h.node, metav1.GetOptions{})
		if err == nil && nodeReady(n) {
			node = n
		} else if time.Now().After(deadline) {
			t.Fatalf("node %s did not become Ready within %s (%v)", h.node, settle, err)
		} else {
			time.Sleep(500 * time.Millisecond)
		}
	}
	capacity, alloc := node.Status.Capacity, node.Status.Allocatable
	eph := capacity[corev1.ResourceEphemeralStorage]
	want := map[corev1.ResourceName]int64{
		corev1.ResourceCPU:              capacity.Cpu().MilliValue() - 500,
		corev1.ResourceMemory:           capacity.Memory().Value() - (300+200+150)<<20,
		corev1.ResourceEphemeralStorage: eph.Value() - 1<<30 - int64(0.05*float64(eph.Value())),
		corev1.ResourcePods:             capacity.Pods().Value(),
	}
	for name, w := range want {
		q, cq := alloc[name], capacity[name]
		got := q.Value()
		if name == corev1.ResourceCPU {
			got = q.MilliValue()
		}
		if got != w {
			t.Errorf("allocatable %s = %s (%d), want %d (capacity %s)", name, q.String(), got, w, cq.String())
		}
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		q, cq := alloc[name], capacity[name]
		t.Logf("%s: capacity %s, allocatable %s", name, cq.String(), q.String())
	}

	// Between allocatable and capacity: refused.
	request := resource.NewQuantity(capacity.Memory().Value()-200<<20, resource.BinarySI)
	h.writeManifest("toobig.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: toobig
spec:
  containers:
  - name: main
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sleep", "3600"]
    resources:
      requests: {memory: "%s"}
`, h.env.Image, request.String()))
	p := h.waitPod("toobig", time.Minute, "rejection", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if p.Status.Reason != "OutOfmemory" || !strings.Contains(p.Status.Message, fmt.Sprintf("capacity: %d", alloc.Memory().Value())) {
		t.Errorf("status reason %q message %q, want OutOfmemory against the allocatable %d", p.Status.Reason, p.Status.Message, alloc.Memory().Value())
	}
}
