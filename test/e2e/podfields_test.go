//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodekit/nodekit"
)

// findPodCondition returns the pod's condition of type ct, or nil.
func findPodCondition(p *corev1.Pod, ct corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == ct {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// waitPodEvent polls the namespace's events until one about the pod has
// reason and a message containing substr, from this node's kubelet.
func waitPodEvent(t *testing.T, c clusterEnv, h *agentHarness, ns, pod, reason, substr string) corev1.Event {
	t.Helper()
	deadline := time.Now().Add(settle)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		evs, err := c.admin.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		cancel()
		if err == nil {
			for _, e := range evs.Items {
				if e.InvolvedObject.Name == pod && e.Reason == reason && strings.Contains(e.Message, substr) && e.Source.Host == h.node {
					return e
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event for pod %s containing %q within %s; events: %v (err %v)", reason, pod, substr, settle, evs, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// podRefused reports a pod the kubelet rejected at admission with reason.
func podRefused(reason string) func(*corev1.Pod, error) bool {
	return func(p *corev1.Pod, err error) bool {
		return err == nil && p.Status.Phase == corev1.PodFailed && p.Status.Reason == reason
	}
}

func TestReadinessGatesHoldReadyUntilTheirConditionIsTrue(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	const gate = "example.com/load-balancer"
	pod := h.apiPod(ns, "gated", 0)
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
	createAPIPod(t, c, pod)
	p := waitAPIPod(t, c, ns, "gated", settle, "containers ready, Ready held back by the gate", func(p *corev1.Pod, err error) bool {
		if err != nil {
			return false
		}
		cr, r := findPodCondition(p, corev1.ContainersReady), findPodCondition(p, corev1.PodReady)
		return cr != nil && cr.Status == corev1.ConditionTrue && r != nil && r.Status == corev1.ConditionFalse && r.Reason == "ReadinessGatesNotReady"
	})
	if msg := findPodCondition(p, corev1.PodReady).Message; msg != `corresponding condition of pod readiness gate "example.com/load-balancer" does not exist.` {
		t.Errorf("Ready message = %q", msg)
	}
	patch := func(status corev1.ConditionStatus) {
		t.Helper()
		body := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q,"lastTransitionTime":%q}]}}`, gate, status, time.Now().UTC().Format(time.RFC3339))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.admin.CoreV1().Pods(ns).Patch(ctx, "gated", types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("patch gate condition: %v", err)
		}
	}
	patch(corev1.ConditionFalse)
	p = waitAPIPod(t, c, ns, "gated", settle, "Ready False naming the gate's status", func(p *corev1.Pod, err error) bool {
		r := findPodCondition(p, corev1.PodReady)
		return err == nil && r != nil && r.Status == corev1.ConditionFalse && strings.Contains(r.Message, `is not "True", but False`)
	})
	patch(corev1.ConditionTrue)
	p = waitAPIPod(t, c, ns, "gated", settle, "Ready once the gate is True", func(p *corev1.Pod, err error) bool {
		r := findPodCondition(p, corev1.PodReady)
		return err == nil && r != nil && r.Status == corev1.ConditionTrue
	})
	if g := findPodCondition(p, gate); g == nil || g.Status != corev1.ConditionTrue {
		t.Fatalf("the gate's condition was not kept: %+v", p.Status.Conditions)
	}
	if cr := findPodCondition(p, corev1.ContainersReady); cr == nil || cr.Status != corev1.ConditionTrue {
		t.Fatalf("ContainersReady = %+v", cr)
	}
	if st := statusOf(p, "main"); st == nil || st.RestartCount != 0 {
		t.Fatalf("the container restarted: %+v", st)
	}
}

func TestHostAliasesAndTheManagedEtcHosts(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	aliases := []corev1.HostAlias{{IP: "10.123.0.1", Hostnames: []string{"foo.local", "bar.local"}}}
	pod := h.apiPod(ns, "aliased", 0)
	pod.Spec.Hostname, pod.Spec.Subdomain = "web", "sub"
	pod.Spec.HostAliases = aliases
	createAPIPod(t, c, pod)
	hostNet := h.apiPod(ns, "hostnet", 0)
	hostNet.Spec.HostNetwork = true
	hostNet.Spec.HostAliases = aliases
	createAPIPod(t, c, hostNet)

	p := waitAPIPod(t, c, ns, "aliased", settle, "Running", apiRunning)
	got := h.mustExec(p, "main", "cat", "/etc/hosts")
	want := fmt.Sprintf("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"+
		"fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n"+
		"%s\tweb.sub.%s.svc.cluster.local\tweb\n\n# Entries added by HostAliases.\n10.123.0.1\tfoo.local\tbar.local", p.Status.PodIP, ns)
	if got != want {
		t.Fatalf("/etc/hosts of a pod-network pod =\n%s\nwant\n%s", got, want)
	}

	p = waitAPIPod(t, c, ns, "hostnet", settle, "Running", apiRunning)
	got = h.mustExec(p, "main", "cat", "/etc/hosts")
	node, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	want = strings.TrimSpace("# Kubernetes-managed hosts file (host network).\n" + string(node) + "\n# Entries added by HostAliases.\n10.123.0.1\tfoo.local\tbar.local")
	if got != want {
		t.Fatalf("/etc/hosts of a hostNetwork pod =\n%s\nwant\n%s", got, want)
	}
}

func TestRuntimeClassRuncRunsAndAnUnknownOneIsRefused(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	newClass := func(name, handler string) {
		t.Helper()
		rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: handler}
		if _, err := c.admin.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create RuntimeClass: %v", err)
		}
		t.Cleanup(func() {
			_ = c.admin.NodeV1().RuntimeClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	withClass := func(name, class string) {
		t.Helper()
		pod := h.apiPod(ns, name, 0)
		pod.Spec.RuntimeClassName = &class
		createAPIPod(t, c, pod)
	}
	runc, gone, bad := "runc-"+h.node, "gone-"+h.node, "bad-"+h.node
	newClass(runc, "runc")
	newClass(gone, "runc")
	newClass(bad, "no-such-handler")
	withClass("classy", runc)
	withClass("gone", gone)
	withClass("bad", bad)
	// The API server's RuntimeClass admission refuses a pod naming a class
	// that does not exist; a class deleted after the pod was made is what
	// the node meets. It is deleted before the agent starts.
	if err := c.admin.NodeV1().RuntimeClasses().Delete(ctx, gone, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.start()

	waitAPIPod(t, c, ns, "classy", settle, "Running", apiRunning)
	sbs, err := h.env.runtime(t).ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"io.kubernetes.pod.name": "classy"}})
	if err != nil || len(sbs) != 1 {
		t.Fatalf("sandboxes of classy = %v (err %v), want one", sbs, err)
	}
	if sbs[0].RuntimeHandler != "runc" {
		t.Fatalf("sandbox runtime handler = %q, want runc", sbs[0].RuntimeHandler)
	}

	for _, refused := range []struct{ pod, message string }{
		{"gone", fmt.Sprintf("%q not found", gone)},
		{"bad", "no-such-handler"},
	} {
		e := waitPodEvent(t, c, h, ns, refused.pod, "FailedCreatePodSandBox", refused.message)
		t.Logf("%s: %s", refused.pod, e.Message)
		if e.Type != corev1.EventTypeWarning || !strings.HasPrefix(e.Message, "Failed to create pod sandbox: ") {
			t.Errorf("event = %s %q", e.Type, e.Message)
		}
		p := waitAPIPod(t, c, ns, refused.pod, settle, "Pending, its container waiting to be created", func(p *corev1.Pod, err error) bool {
			return err == nil && p.Status.Phase == corev1.PodPending && len(p.Status.ContainerStatuses) == 1 &&
				p.Status.ContainerStatuses[0].State.Waiting != nil && p.Status.ContainerStatuses[0].State.Waiting.Reason == "ContainerCreating"
		})
		if s := findPodCondition(p, corev1.PodReadyToStartContainers); s == nil || s.Status != corev1.ConditionFalse {
			t.Errorf("%s: PodReadyToStartContainers = %+v, want False", refused.pod, s)
		}
		sbs, err := h.env.runtime(t).ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{
			LabelSelector: map[string]string{"io.kubernetes.pod.name": refused.pod},
			State:         &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}})
		if err != nil || len(sbs) != 0 {
			t.Fatalf("ready sandboxes of %s = %v (err %v), want none", refused.pod, sbs, err)
		}
	}
}

func TestSafeSysctlsAreSetAndAnUnsafeOneIsRefused(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	safe := h.apiPod(ns, "safe", 0)
	safe.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{
		{Name: "net.ipv4.ip_local_port_range", Value: "20000 21000"},
		{Name: "net.ipv4.tcp_keepalive_time", Value: "600"},
	}}
	createAPIPod(t, c, safe)
	unsafe := h.apiPod(ns, "unsafe", 0)
	unsafe.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.msgmax", Value: "65536"}}}
	createAPIPod(t, c, unsafe)

	p := waitAPIPod(t, c, ns, "unsafe", settle, "rejected with SysctlForbidden", podRefused("SysctlForbidden"))
	if want := `Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted`; p.Status.Message != want {
		t.Errorf("message = %q, want %q", p.Status.Message, want)
	}
	p = waitAPIPod(t, c, ns, "safe", settle, "Running", apiRunning)
	if got := h.mustExec(p, "main", "cat", "/proc/sys/net/ipv4/ip_local_port_range"); strings.Join(strings.Fields(got), " ") != "20000 21000" {
		t.Errorf("ip_local_port_range in the pod = %q", got)
	}
	if got := h.mustExec(p, "main", "cat", "/proc/sys/net/ipv4/tcp_keepalive_time"); got != "600" {
		t.Errorf("tcp_keepalive_time in the pod = %q", got)
	}
	sbs, err := h.env.runtime(t).ListPodSandbox(context.Background(), &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"io.kubernetes.pod.name": "unsafe"}})
	if err != nil || len(sbs) != 0 {
		t.Fatalf("sandboxes of the refused pod = %v (err %v), want none", sbs, err)
	}
}

func TestAnExtendedResourceTheNodeLacksIsRefused(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	pod := h.apiPod(ns, "gpu", 0)
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
		Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
	}
	createAPIPod(t, c, pod)
	p := waitAPIPod(t, c, ns, "gpu", settle, "rejected as OutOfnvidia.com/gpu", podRefused("OutOfnvidia.com/gpu"))
	if want := "Pod was rejected: Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0"; p.Status.Message != want {
		t.Errorf("message = %q, want %q", p.Status.Message, want)
	}
	sbs, err := h.env.runtime(t).ListPodSandbox(context.Background(), &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"io.kubernetes.pod.name": "gpu"}})
	if err != nil || len(sbs) != 0 {
		t.Fatalf("sandboxes of the refused pod = %v (err %v), want none", sbs, err)
	}
}

func TestHostUsersFalseIsRefusedNamingTheField(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	pod := h.apiPod(ns, "userns", 0)
	no := false
	pod.Spec.HostUsers = &no
	createAPIPod(t, c, pod)
	// containerd 2.4.2 with Debian's runc 1.1.5 reports no user namespace
	// support for its handlers, so this is the kubelet's refusal.
	e := waitPodEvent(t, c, h, ns, "userns", "FailedCreatePodSandBox", "spec.hostUsers is false")
	t.Logf("event: %s", e.Message)
	if !strings.Contains(e.Message, "does not support user namespaces") && !strings.Contains(e.Message, "not supported by nodekit yet") {
		t.Errorf("event message = %q", e.Message)
	}
	waitAPIPod(t, c, ns, "userns", settle, "Pending", func(p *corev1.Pod, err error) bool {
		return err == nil && p.Status.Phase == corev1.PodPending
	})
}

func TestAnUnsafeSysctlAllowedByTheNodeRuns(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.startWith(func(cfg *nodekit.Config) { cfg.Agent.AllowedUnsafeSysctls = []string{"kernel.msg*"} })
	pod := h.apiPod(ns, "allowed", 0)
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.msgmax", Value: "12345"}}}
	createAPIPod(t, c, pod)
	// (A host-namespace clash, kernel.msgmax with hostIPC, is refused by
	// the API server's validation before a node sees it; the unit tests
	// cover the node's own check.)
	p := waitAPIPod(t, c, ns, "allowed", settle, "Running", apiRunning)
	if got := h.mustExec(p, "main", "cat", "/proc/sys/kernel/msgmax"); got != "12345" {
		t.Errorf("kernel.msgmax in the pod = %q, want 12345", got)
	}
}
