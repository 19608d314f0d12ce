//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// execIn runs cmd in the newest running instance of a container of a pod
// (by the pod's status), through the CRI, and fails the test on error.
func (h *agentHarness) execIn(pod *corev1.Pod, container string, cmd ...string) {
	h.t.Helper()
	st := statusOf(pod, container)
	if st == nil || st.ContainerID == "" {
		h.t.Fatalf("container %s of %s has no ID: %s", container, pod.Name, describe(pod))
	}
	id := st.ContainerID[len("containerd://"):]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, stderr, err := h.env.runtime(h.t).ExecSync(ctx, id, cmd, 10*time.Second); err != nil {
		h.t.Fatalf("exec %v in %s: %v (%s)", cmd, container, err, stderr)
	}
}

// ready reports the pod's Ready condition and its container's ready flag.
func ready(p *corev1.Pod, container string) (cond corev1.ConditionStatus, containerReady bool) {
	st := statusOf(p, container)
	return podCondition(p, corev1.PodReady), st != nil && st.Ready
}

// restarts is the container's restart count, or -1 without a status.
func restarts(p *corev1.Pod, container string) int32 {
	if st := statusOf(p, container); st != nil {
		return st.RestartCount
	}
	return -1
}

// findPod returns the static pod named name (without the node suffix) from
// /pods, or nil.
func (h *agentHarness) findPod(name string) *corev1.Pod {
	pods, err := h.pods()
	if err != nil {
		return nil
	}
	for i := range pods {
		if pods[i].Name == name+"-"+h.node {
			return &pods[i]
		}
	}
	return nil
}

// notAfter fails the test when d exceeds limit.
func notAfter(t *testing.T, what string, d, limit time.Duration) {
	t.Helper()
	if d > limit {
		t.Errorf("%s took %s, want at most %s", what, d, limit)
	}
}
