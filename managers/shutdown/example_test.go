package shutdown_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/managers/shutdown"
)

// ExampleConfig_Groups shows how the two kubelet periods split the
// shutdown and where a critical pod goes.
func ExampleConfig_Groups() {
	cfg := shutdown.Config{GracePeriod: 30 * time.Second, GracePeriodCriticalPods: 10 * time.Second}
	critical := int32(2000001000) // system-node-critical
	own := int64(60)
	pods := []*corev1.Pod{
		{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &own}},
		{Spec: corev1.PodSpec{Priority: &critical}},
	}
	for _, g := range shutdown.GroupPods(cfg.Groups(), pods) {
		fmt.Printf("priority %d: %d pod(s), grace %ds\n", g.Priority, len(g.Pods), shutdown.GracePeriod(g.Pods[0], g))
	}
	// Output:
	// priority 0: 1 pod(s), grace 20s
	// priority 2000000000: 1 pod(s), grace 10s
}
