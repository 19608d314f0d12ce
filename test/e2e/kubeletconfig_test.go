//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubeadmKubeletConfigurationStartsTheAgent runs the nodekit binary
// with the KubeletConfiguration kubeadm writes
// (cmd/nodekit/testdata/kubeadm-config.yaml, with its paths adjusted to
// the lab: the cluster CA, the manifest directory, the runtime endpoint,
// the host's resolv.conf, a free read-only and secure port, the lab's
// cgroup root) joined to the lab's API server. The node registers with
// the file's taints and the flags' labels and turns Ready, an API pod
// runs (the file's cgroupDriver systemd gives way to the runtime's
// cgroupfs, as the kubelet takes the runtime's), and each field nodekit
// ignores is named once in the log.
func TestKubeadmKubeletConfigurationStartsTheAgent(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	bin := buildAgent(t)

	data, err := os.ReadFile("../../cmd/nodekit/testdata/kubeadm-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h.port = freePort(t)
	securePort := freePort(t)
	file := strings.NewReplacer(
		"clientCAFile: /etc/kubernetes/pki/ca.crt", "clientCAFile: "+c.caFile,
		"staticPodPath: /etc/kubernetes/manifests", "staticPodPath: "+h.manifests,
		`containerRuntimeEndpoint: ""`, "containerRuntimeEndpoint: "+h.env.Endpoint,
		"resolvConf: /run/systemd/resolve/resolv.conf", "resolvConf: /etc/resolv.conf",
	).Replace(string(data))
	file += "readOnlyPort: " + strconv.Itoa(h.port) + "\nport: " + strconv.Itoa(securePort) + "\ncgroupRoot: " + h.env.CgroupParent +
		"\nregisterWithTaints:\n- key: example.com/edge\n  value: \"true\"\n  effect: NoSchedule\n"
	for _, want := range []string{c.caFile, h.manifests, h.env.Endpoint, "/etc/resolv.conf"} {
		if !strings.Contains(file, want) {
			t.Fatalf("the kubeadm file was not adjusted to %s:\n%s", want, file)
		}
	}
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}

	logPath := filepath.Join(t.TempDir(), "nodekit.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	// The flags the lab needs on top of the file: the shared containerd's
	// images and disk are not this agent's to collect or evict for.
	cmd := exec.Command(bin, "run", "--config", config, "--kubeconfig", h.kubeconfig, "--node-name", h.node,
		"--node-ip", "127.0.0.1", "--root-dir", h.rootDir,
		"--pod-logs-dir", filepath.Join(h.rootDir, "logs"), "--container-logs-dir", h.logLinks, "--node-labels", "example.com/pool=edge,kubelet.kubernetes.io/site=lab",
		"--eviction-hard", "none", "--image-gc-high-threshold", "100", "--image-gc-low-threshold", "99", "-v", "2")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start nodekit: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("nodekit log:\n%s", b)
		}
	})

	took := within(t, 2*time.Minute, "the node to be Ready", func() bool { return nodeReadyStatus(c, h.node) == corev1.ConditionTrue })
	t.Logf("node Ready %s after start", took.Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	node, err := c.admin.CoreV1().Nodes().Get(ctx, h.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node.Labels["example.com/pool"] != "edge" || node.Labels["kubelet.kubernetes.io/site"] != "lab" {
		t.Errorf("node labels %v: want the --node-labels", node.Labels)
	}
	// The API server's TaintNodesByCondition admission adds
	// node.kubernetes.io/not-ready at creation: look for the file's taint.
	tainted := false
	for _, taint := range node.Spec.Taints {
		tainted = tainted || (taint.Key == "example.com/edge" && taint.Value == "true" && taint.Effect == corev1.TaintEffectNoSchedule)
	}
	if !tainted {
		t.Errorf("node taints %v: want the file's registerWithTaints", node.Spec.Taints)
	}
	if got := node.Status.DaemonEndpoints.KubeletEndpoint.Port; got != int32(securePort) {
		t.Errorf("kubelet endpoint port %d, want the file's port %d", got, securePort)
	}

	if _, err := c.admin.CoreV1().Pods(ns).Create(ctx, h.apiPod(ns, "kubeadm-config", 0), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAPIPod(t, c, ns, "kubeadm-config", 2*time.Minute, "Running and Ready", apiRunning)

	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, field := range []string{"healthzBindAddress", "healthzPort"} {
		if n := strings.Count(log, "KubeletConfiguration field "+field+" is not supported"); n != 1 {
			t.Errorf("field %s is named %d times in the log, want once", field, n)
		}
	}
	if n := strings.Count(log, "KubeletConfiguration field"); n != 2 {
		t.Errorf("%d fields named in the log, want 2 (the kubeadm file's supported fields must not warn)", n)
	}
	if !strings.Contains(log, `Using the runtime's cgroup driver in place of the configured one`) {
		t.Errorf("the log does not say the runtime's cgroup driver replaced the file's systemd")
	}
}
