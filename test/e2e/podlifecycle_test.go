//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestClusterActiveDeadlineFailsAndKillsThePod: a running pod whose
// activeDeadlineSeconds is set (an update, as the conformance spec does)
// becomes Failed with reason DeadlineExceeded and its container stops, as
// the kubelet's active-deadline handler does.
func TestClusterActiveDeadlineFailsAndKillsThePod(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	ctx := context.Background()
	if _, err := c.admin.CoreV1().Pods(ns).Create(ctx, h.apiPod(ns, "deadline", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAPIPod(t, c, ns, "deadline", settle, "Running", apiRunning)
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"activeDeadlineSeconds": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.admin.CoreV1().Pods(ns).Patch(ctx, "deadline", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitAPIPod(t, c, ns, "deadline", settle, "Failed with reason DeadlineExceeded", func(p *corev1.Pod, err error) bool {
		return err == nil && p.Status.Phase == corev1.PodFailed && p.Status.Reason == "DeadlineExceeded"
	})
	if p.Status.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("message = %q", p.Status.Message)
	}
	waitAPIPod(t, c, ns, "deadline", settle, "its container terminated", func(p *corev1.Pod, err error) bool {
		return err == nil && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Terminated != nil
	})
}

// TestClusterPodForAnotherOSIsRejected: admission refuses a pod whose
// spec.os.name is not the node's OS, with the kubelet's reason, and runs
// nothing of it.
func TestClusterPodForAnotherOSIsRejected(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	other := corev1.Windows
	if runtime.GOOS == string(corev1.Windows) {
		other = corev1.Linux
	}
	pod := h.apiPod(ns, "wrong-os", 1)
	pod.Spec.OS = &corev1.PodOS{Name: other}
	if _, err := c.admin.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitAPIPod(t, c, ns, "wrong-os", settle, "Failed with reason PodOSNotSupported", func(p *corev1.Pod, err error) bool {
		return err == nil && p.Status.Phase == corev1.PodFailed && p.Status.Reason == "PodOSNotSupported"
	})
	if n := len(h.runningContainers()); n != 0 {
		t.Errorf("%d containers run for a rejected pod: %s", n, describe(p))
	}
}

// TestClusterContainerRestartRules: under the pod's restartPolicy Never, a
// container whose restartPolicyRules restart it on exit code 42 is
// restarted and the pod stays Running, while one that exits 1 (the rule
// does not match, its own policy is Never) is not, and its pod fails.
func TestClusterContainerRestartRules(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	never := corev1.ContainerRestartPolicyNever
	rulePod := func(name, code string) *corev1.Pod {
		pod := h.apiPod(ns, name, 1)
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		ctr := &pod.Spec.Containers[0]
		ctr.Command = []string{"sh", "-c", "exit " + code}
		ctr.RestartPolicy = &never
		ctr.RestartPolicyRules = []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart,
			ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
		return pod
	}
	for _, p := range []*corev1.Pod{rulePod("match", "42"), rulePod("mismatch", "1")} {
		if _, err := c.admin.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitAPIPod(t, c, ns, "match", settle, "restarted and still Running", func(p *corev1.Pod, err error) bool {
		return err == nil && p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 &&
			p.Status.ContainerStatuses[0].RestartCount >= 1
	})
	p := waitAPIPod(t, c, ns, "mismatch", settle, "Failed", func(p *corev1.Pod, err error) bool {
		return err == nil && p.Status.Phase == corev1.PodFailed
	})
	if n := p.Status.ContainerStatuses[0].RestartCount; n != 0 {
		t.Errorf("mismatch restarted %d times: %s", n, describe(p))
	}
}
