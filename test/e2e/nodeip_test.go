//go:build e2e

package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/nodekit/nodekit"
)

// TestWithoutNodeIPTheDetectedAddressIsEverywhere is issue 16's node IP
// point: without --node-ip the address is detected as the kubelet does
// (the e2e node names do not resolve, so the default route's interface),
// and the Node's InternalIP, a pod's status.hostIP, a HOST_IP fieldRef
// (a DaemonSet's usual one) and a hostNetwork pod's podIP are all it.
func TestWithoutNodeIPTheDetectedAddressIsEverywhere(t *testing.T) {
	want, err := utilnet.ChooseHostInterface()
	if err != nil {
		t.Skipf("this machine has no default route to detect an address from: %v", err)
	}
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.configure = func(cfg *nodekit.Config) { cfg.Agent.NodeIP = "" }
	h.start()
	ctx := context.Background()

	pod := h.envPod(ns, "hostip", []corev1.EnvVar{{Name: "HOST_IP", ValueFrom: fieldRef("status.hostIP")}}, nil)
	_, err = c.admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	createOrFail(t, err)
	hn := h.envPod(ns, "hostnet", []corev1.EnvVar{
		{Name: "POD_IP", ValueFrom: fieldRef("status.podIP")}, {Name: "HOST_IP", ValueFrom: fieldRef("status.hostIP")},
	}, nil)
	hn.Spec.HostNetwork = true
	_, err = c.admin.CoreV1().Pods(ns).Create(ctx, hn, metav1.CreateOptions{})
	createOrFail(t, err)

	p := waitAPIPod(t, c, ns, "hostip", settle, "Running", apiRunning)
	if got := h.apiEnv(p)["HOST_IP"]; got != want.String() || p.Status.HostIP != want.String() {
		t.Errorf("env HOST_IP %q, status.hostIP %q; want the detected %s", got, p.Status.HostIP, want)
	}
	p = waitAPIPod(t, c, ns, "hostnet", settle, "Running", apiRunning)
	got := h.apiEnv(p)
	if p.Status.PodIP != want.String() || got["POD_IP"] != want.String() || got["HOST_IP"] != want.String() {
		t.Errorf("hostNetwork pod: status.podIP %q, env POD_IP %q HOST_IP %q; want the detected %s", p.Status.PodIP, got["POD_IP"], got["HOST_IP"], want)
	}
	node, err := c.admin.CoreV1().Nodes().Get(ctx, h.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var internal []string
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			internal = append(internal, a.Address)
		}
	}
	if len(internal) != 1 || internal[0] != want.String() {
		t.Errorf("Node InternalIP addresses %v, want [%s]", internal, want)
	}
}
