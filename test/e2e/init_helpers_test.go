//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// criTimes are one container's CRI timestamps, to the nanosecond (the API
// status rounds them to seconds).
type criTimes struct {
	started, finished time.Time
	state             runtimeapi.ContainerState
}

// criContainers returns, by container name, the newest instance of each
// container of the pod with the given UID, as the runtime reports it.
func (h *agentHarness) criContainers(uid string) map[string]criTimes {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rs := h.env.runtime(h.t)
	list, err := rs.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{
		noderuntime.LabelInstance: h.node, noderuntime.LabelPodUID: uid}})
	if err != nil {
		h.t.Fatalf("list containers: %v", err)
	}
	out := map[string]criTimes{}
	newest := map[string]int64{}
	for _, c := range list {
		name := c.GetMetadata().GetName()
		if c.GetCreatedAt() < newest[name] {
			continue
		}
		resp, err := rs.ContainerStatus(ctx, c.GetId(), false)
		if err != nil {
			h.t.Fatalf("container status %s: %v", name, err)
		}
		s := resp.GetStatus()
		newest[name] = c.GetCreatedAt()
		out[name] = criTimes{started: time.Unix(0, s.GetStartedAt()), finished: time.Unix(0, s.GetFinishedAt()), state: s.GetState()}
	}
	return out
}

// containerLog reads the first log file of a container of a static pod.
func (h *agentHarness) containerLog(pod *corev1.Pod, container string) string {
	h.t.Helper()
	path := filepath.Join(h.rootDir, "logs", pod.Namespace+"_"+pod.Name+"_"+string(pod.UID), container, "0.log")
	b, err := os.ReadFile(path)
	if err != nil {
		h.t.Fatalf("read log of %s: %v", container, err)
	}
	return string(b)
}

// waitNoRunningContainers waits until none of the agent's containers runs.
func (h *agentHarness) waitNoRunningContainers(timeout time.Duration) {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	for len(h.runningContainers()) > 0 {
		if time.Now().After(deadline) {
			h.t.Fatalf("containers still running %s later: %d", timeout, len(h.runningContainers()))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// statusOf finds a container's status among the pod's lists.
func statusOf(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses, p.Status.EphemeralContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// podCondition returns the status of the pod's condition t.
func podCondition(p *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// notBefore fails the test unless a happened no later than b.
func notBefore(t *testing.T, what string, a, b time.Time) {
	t.Helper()
	if a.After(b) {
		t.Errorf("%s: %s is after %s", what, a.Format(time.RFC3339Nano), b.Format(time.RFC3339Nano))
	}
}
