//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func TestNodeRegistersReadyWithCapacityAndLease(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	h.joinCluster(c)
	h.start()
	var node *corev1.Node
	deadline := time.Now().Add(settle)
	for time.Now().Before(deadline) {
		n, err := c.admin.CoreV1().Nodes().Get(context.Background(), h.node, metav1.GetOptions{})
		if err == nil && nodeReady(n) {
			node = n
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if node == nil {
		t.Fatalf("node %s did not become Ready within %s", h.node, settle)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourcePods} {
		if q, ok := node.Status.Capacity[r]; !ok || q.IsZero() {
			t.Errorf("capacity %s missing", r)
		}
	}
	if !strings.HasPrefix(node.Status.NodeInfo.ContainerRuntimeVersion, "containerd://2.4.2") {
		t.Errorf("runtime version %q", node.Status.NodeInfo.ContainerRuntimeVersion)
	}
	out, err := exec.Command("kubectl", "--kubeconfig", c.adminKubeconfig, "get", "nodes", h.node, "-o", "wide").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Ready") || !strings.Contains(string(out), "containerd://2.4.2") || !strings.Contains(string(out), "127.0.0.1") {
		t.Errorf("kubectl get nodes -o wide: %v\n%s", err, out)
	}
	renewals := map[string]bool{}
	deadline = time.Now().Add(40 * time.Second)
	for len(renewals) < 2 && time.Now().Before(deadline) {
		var l *coordinationv1.Lease
		l, err = c.admin.CoordinationV1().Leases("kube-node-lease").Get(context.Background(), h.node, metav1.GetOptions{})
		if err == nil && l.Spec.RenewTime != nil {
			renewals[l.Spec.RenewTime.String()] = true
			if *l.Spec.LeaseDurationSeconds != 40 || *l.Spec.HolderIdentity != h.node {
				t.Fatalf("lease %+v", l.Spec)
			}
		}
		time.Sleep(time.Second)
	}
	if len(renewals) < 2 {
		t.Fatalf("lease renewTime did not advance within 40s (seen %v, err %v)", renewals, err)
	}
}

func TestAPIPodRunsAndItsStatusReachesTheAPI(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	if _, err := c.admin.CoreV1().Pods(ns).Create(context.Background(), h.apiPod(ns, "api", 5), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitAPIPod(t, c, ns, "api", settle, "Running with IPs, start time and Ready", apiRunning)
	if p.Status.HostIP != "127.0.0.1" || p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Fatalf("status: %s", describe(p))
	}
}

func TestKubectlDeleteStopsContainersThenRemovesThePod(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	for _, name := range []string{"graceful", "forced"} {
		if _, err := c.admin.CoreV1().Pods(ns).Create(context.Background(), h.apiPod(ns, name, 10), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitAPIPod(t, c, ns, name, settle, "Running", apiRunning)
	}
	kubectl := func(args ...string) {
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", c.adminKubeconfig, "-n", ns}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
	}
	kubectl("delete", "pod", "graceful", "--wait=false")
	waitAPIPod(t, c, ns, "graceful", 40*time.Second, "gone from the API (within the 10s grace period and well past it)", func(_ *corev1.Pod, err error) bool {
		return apierrors.IsNotFound(err)
	})
	kubectl("delete", "pod", "forced", "--grace-period=0", "--force", "--wait=false")
	deadline := time.Now().Add(40 * time.Second)
	for len(h.runningContainers()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d containers still run 40s after the deletions", len(h.runningContainers()))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func TestStaticPodHasAMirrorThatComesBackWhenDeleted(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	h.joinCluster(c)
	h.writeManifest("web.yaml", twoContainerPod(h.env.Image, "web", "a"))
	h.start()
	name := "web-" + h.node
	first := waitAPIPod(t, c, "default", name, settle, "mirror pod Running", func(p *corev1.Pod, err error) bool {
		return err == nil && p.Annotations["kubernetes.io/config.mirror"] != "" && p.Status.Phase == corev1.PodRunning
	})
	before := h.runningContainers()
	zero := int64(0)
	if err := c.admin.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitAPIPod(t, c, "default", name, settle, "mirror pod recreated with a new UID", func(p *corev1.Pod, err error) bool {
		return err == nil && p.UID != first.UID && p.Status.Phase == corev1.PodRunning
	})
	after := h.runningContainers()
	if len(after) != len(before) {
		t.Fatalf("containers before %d after %d", len(before), len(after))
	}
	ids := map[string]bool{}
	for _, c := range before {
		ids[c.Id] = true
	}
	for _, c := range after {
		if !ids[c.Id] {
			t.Fatalf("container %s is new: deleting the mirror pod touched the static pod", c.Id)
		}
	}
	t.Cleanup(func() {
		_ = c.admin.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
}

func TestAPIServerOutageRestartsNothing(t *testing.T) {
	if os.Getenv("NODEKIT_E2E_SHORT") != "" {
		t.Skip("NODEKIT_E2E_SHORT set: skipping the 60s outage")
	}
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	if _, err := c.admin.CoreV1().Pods(ns).Create(context.Background(), h.apiPod(ns, "steady", 5), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// finisher exits during the outage: its status must catch up after.
	finisher := h.apiPod(ns, "finisher", 5)
	finisher.Spec.RestartPolicy = corev1.RestartPolicyNever
	finisher.Spec.Containers[0].Command = []string{"sh", "-c", "sleep 20"}
	if _, err := c.admin.CoreV1().Pods(ns).Create(context.Background(), finisher, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := waitAPIPod(t, c, ns, "steady", settle, "Running", apiRunning)
	waitAPIPod(t, c, ns, "finisher", settle, "Running", apiRunning)
	controlPlane := func(script string) {
		if out, err := exec.Command("bash", script, "--apiserver-only").CombinedOutput(); err != nil {
			t.Fatalf("%s --apiserver-only: %v\n%s", script, err, out)
		}
	}
	controlPlane(c.down)
	restarted := false
	defer func() {
		if !restarted {
			controlPlane(c.up)
		}
	}()
	outageEnd := time.Now().Add(60 * time.Second)
	for time.Now().Before(outageEnd) {
		if n := len(h.runningContainers()); n < 1 || n > 2 {
			t.Fatalf("%d containers run during the outage, want steady's (and finisher's until it exits)", n)
		}
		time.Sleep(2 * time.Second)
	}
	controlPlane(c.up)
	restarted = true
	c = loadCluster(t)
	after := waitAPIPod(t, c, ns, "steady", settle, "Running again in the API", apiRunning)
	waitAPIPod(t, c, ns, "finisher", settle, "Succeeded in the API after the outage", func(p *corev1.Pod, err error) bool {
		return err == nil && p.Status.Phase == corev1.PodSucceeded
	})
	b, a := before.Status.ContainerStatuses[0], after.Status.ContainerStatuses[0]
	if a.ContainerID != b.ContainerID || a.RestartCount != 0 {
		t.Fatalf("container restarted across the outage: %s -> %s (restarts %d)", b.ContainerID, a.ContainerID, a.RestartCount)
	}
}
