//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodekit/nodekit"
)

// nodeProxy GETs path on the harness's node through the API server's node
// proxy (the kubelet API on the node's secure port), as the admin.
// params are name, value pairs of the query.
func nodeProxy(c clusterEnv, node, path string, params ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := c.admin.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/" + node + "/proxy" + path)
	for i := 0; i+1 < len(params); i += 2 {
		req = req.Param(params[i], params[i+1])
	}
	return req.DoRaw(ctx)
}

// summaryComplete says what the summary still lacks: node CPU and memory,
// and for each of the pod's containers CPU, memory and filesystem usage.
func summaryComplete(s *statsapi.Summary, ns, pod string, containers []string) string {
	if s.Node.CPU == nil || s.Node.CPU.UsageCoreNanoSeconds == nil || s.Node.Memory == nil || s.Node.Memory.WorkingSetBytes == nil {
		return "node cpu or memory"
	}
	if s.Node.Fs == nil || s.Node.Runtime == nil || s.Node.Runtime.ImageFs == nil || s.Node.Rlimit == nil {
		return "node filesystems or rlimit"
	}
	for _, p := range s.Pods {
		if p.PodRef.Namespace != ns || p.PodRef.Name != pod {
			continue
		}
		if p.CPU == nil || p.Memory == nil || p.EphemeralStorage == nil {
			return "pod cpu, memory or ephemeral storage"
		}
		have := map[string]bool{}
		for _, c := range p.Containers {
			if c.CPU == nil || c.CPU.UsageCoreNanoSeconds == nil || c.CPU.UsageNanoCores == nil ||
				c.Memory == nil || c.Memory.WorkingSetBytes == nil ||
				c.Rootfs == nil || c.Rootfs.UsedBytes == nil || c.Rootfs.CapacityBytes == nil ||
				c.Logs == nil || c.Logs.UsedBytes == nil {
				return "container " + c.Name + " cpu, memory, rootfs or logs"
			}
			have[c.Name] = true
		}
		for _, name := range containers {
			if !have[name] {
				return "container " + name
			}
		}
		return ""
	}
	return "pod " + ns + "/" + pod
}

// metricsServerEnv reads hack/metrics-server-up.sh's env file beside the
// control plane's admin kubeconfig (the environment wins): metrics-server's
// URL and the node address the API server and metrics-server can reach.
// Without it, it fails under CI=true and skips otherwise.
func metricsServerEnv(t *testing.T, c clusterEnv) (url, nodeAddress string) {
	t.Helper()
	vars := map[string]string{}
	if f, err := os.Open(filepath.Join(filepath.Dir(c.adminKubeconfig), "metrics-server", "env")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "="); ok {
				vars[k] = v
			}
		}
		f.Close()
	}
	get := func(k string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return vars[k]
	}
	url, nodeAddress = get("NODEKIT_METRICS_SERVER"), get("NODEKIT_NODE_ADDRESS")
	if url == "" || nodeAddress == "" {
		fail := t.Skipf
		if os.Getenv("CI") == "true" {
			fail = t.Fatalf
		}
		fail("metrics-server and the node address are not up: run hack/metrics-server-up.sh")
	}
	return url, nodeAddress
}

func kubectl(c clusterEnv, args ...string) (string, error) {
	bin := os.Getenv("NODEKIT_KUBECTL")
	if bin == "" {
		bin = "kubectl"
	}
	out, err := exec.Command(bin, append([]string{"--kubeconfig", c.adminKubeconfig}, args...)...).CombinedOutput()
	return string(out), err
}

// TestStatsThroughTheAPIServerAndKubectlTop is issue 13's acceptance 3:
// /stats/summary and /metrics/resource through the API server's node proxy,
// and `kubectl top` through the real metrics-server.
func TestStatsThroughTheAPIServerAndKubectlTop(t *testing.T) {
	c := loadCluster(t)
	_, nodeAddress := metricsServerEnv(t, c)
	h := newAgentHarness(t)
	// The API server does not proxy to a loopback address: the node
	// reports an address redirected to the agent's loopback listener.
	h.configure = func(cfg *nodekit.Config) { cfg.Agent.NodeIP = nodeAddress }
	ns := h.joinCluster(c)
	h.start()
	pod := h.apiPod(ns, "busy", 0)
	pod.Spec.Containers[0].Command = []string{"sh", "-c", "trap 'exit 0' TERM; while true; do i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; usleep 100000; done & wait"}
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
		Name: "idle", Image: h.env.Image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command: []string{"sh", "-c", "trap 'exit 0' TERM; echo hello; sleep 3600 & wait"},
	})
	if _, err := c.admin.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAPIPod(t, c, ns, "busy", settle, "running", apiRunning)

	var summary statsapi.Summary
	missing := "no answer"
	deadline := time.Now().Add(time.Minute)
	for missing != "" && time.Now().Before(deadline) {
		body, err := nodeProxy(c, h.node, "/stats/summary")
		if err != nil {
			missing = fmt.Sprintf("%v (%s)", err, body)
		} else if err := json.Unmarshal(body, &summary); err != nil {
			t.Fatalf("decode summary: %v\n%s", err, body)
		} else {
			missing = summaryComplete(&summary, ns, "busy", []string{"main", "idle"})
		}
		if missing != "" {
			time.Sleep(time.Second)
		}
	}
	if missing != "" {
		t.Fatalf("/stats/summary through the API server still lacks %s after a minute", missing)
	}
	if summary.Node.NodeName != h.node {
		t.Errorf("summary node name %q, want %q", summary.Node.NodeName, h.node)
	}

	body, err := nodeProxy(c, h.node, "/stats/summary", "only_cpu_and_memory", "true")
	var only statsapi.Summary
	if err != nil || json.Unmarshal(body, &only) != nil || only.Node.Fs != nil || len(only.Pods) == 0 || only.Pods[0].Containers[0].Rootfs != nil {
		t.Errorf("only_cpu_and_memory=true: %v\n%s", err, body)
	}

	body, err = nodeProxy(c, h.node, "/metrics/resource")
	if err != nil {
		t.Fatalf("/metrics/resource through the API server: %v", err)
	}
	text := string(body)
	for _, m := range []string{"node_cpu_usage_seconds_total ", "node_memory_working_set_bytes ", "resource_scrape_error 0", "scrape_error 0",
		fmt.Sprintf(`pod_cpu_usage_seconds_total{namespace=%q,pod="busy"}`, ns),
		fmt.Sprintf(`pod_memory_working_set_bytes{namespace=%q,pod="busy"}`, ns)} {
		if !strings.Contains(text, m) {
			t.Errorf("/metrics/resource lacks %s", m)
		}
	}
	for _, name := range []string{"main", "idle"} {
		for _, m := range []string{"container_cpu_usage_seconds_total", "container_memory_working_set_bytes", "container_start_time_seconds"} {
			if want := fmt.Sprintf(`%s{container=%q,namespace=%q,pod="busy"}`, m, name, ns); !strings.Contains(text, want) {
				t.Errorf("/metrics/resource lacks %s", want)
			}
		}
	}
	if t.Failed() {
		t.Logf("/metrics/resource:\n%s", text)
	}

	// metrics-server needs two scrapes, 15 s apart, for a rate.
	nodeRow := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(h.node) + `\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%`)
	podRow := regexp.MustCompile(`(?m)^busy\s+\d+m\s+\d+Mi`)
	containerRows := regexp.MustCompile(`(?m)^busy\s+(main|idle)\s+\d+m\s+\d+Mi`)
	var out string
	deadline = time.Now().Add(2 * time.Minute)
	for {
		var errs []error
		nodeOut, err := kubectl(c, "top", "node", h.node)
		errs = append(errs, err)
		podOut, err := kubectl(c, "top", "pod", "-n", ns)
		errs = append(errs, err)
		ctrOut, err := kubectl(c, "top", "pod", "-n", ns, "--containers")
		errs = append(errs, err)
		out = nodeOut + "\n" + podOut + "\n" + ctrOut
		if errs[0] == nil && errs[1] == nil && errs[2] == nil && nodeRow.MatchString(nodeOut) && podRow.MatchString(podOut) &&
			len(containerRows.FindAllString(ctrOut, -1)) == 2 {
			t.Logf("kubectl top:\n%s", out)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl top shows no numbers for node %s and pod busy after 2 minutes:\n%s", h.node, out)
		}
		time.Sleep(2 * time.Second)
	}
}
