//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/runtime/cri"
)

// TestContainerLogsInTheKubeletLayout runs a pod on containerd and checks
// the kubelet's log paths in the agent's private directories: the output
// in PodLogsDir/NS_POD_UID/main/0.log, the ContainerLogsDir link
// POD_NS_main-ID.log resolving to it, and both gone once the pod is.
func TestContainerLogsInTheKubeletLayout(t *testing.T) {
	h := newAgentHarness(t)
	checkLogPaths(t, h, filepath.Join(h.rootDir, "logs"), h.logLinks)
}

// TestContainerLogsDefaultToVarLog is the one test that uses the node's
// /var/log/pods and /var/log/containers, the kubelet's defaults (its pod
// name holds its node's, so it meets no other agent's files there).
func TestContainerLogsDefaultToVarLog(t *testing.T) {
	h := newAgentHarness(t)
	h.configure = func(c *nodekit.Config) { c.PodLogsDir, c.ContainerLogsDir = "", "" }
	checkLogPaths(t, h, cri.DefaultPodLogsDir, cri.DefaultContainerLogsDir)
}

func checkLogPaths(t *testing.T, h *agentHarness, podLogs, links string) {
	t.Helper()
	prev := h.configure
	h.configure = func(c *nodekit.Config) {
		if prev != nil {
			prev(c)
		}
		c.Agent.ContainerGCPeriod = 2 * time.Second
	}
	h.writeManifest("talker.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: talker
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: %s
    command: ["sh", "-c", %q]
`, h.env.Image, "echo hello from the talker; "+trapSleep))
	h.start()
	p := h.waitPod("talker", settle, "running", running)
	dir := filepath.Join(podLogs, p.Namespace+"_"+p.Name+"_"+string(p.UID))
	logFile := filepath.Join(dir, "main", "0.log")
	waitFileHolding(t, logFile, "hello from the talker")
	id := strings.TrimPrefix(statusOf(p, "main").ContainerID, "containerd://")
	link := filepath.Join(links, fmt.Sprintf("%s_%s_main-%s.log", p.Name, p.Namespace, id))
	if target, err := os.Readlink(link); err != nil || target != logFile {
		t.Fatalf("link %s -> %q (%v), want %s", link, target, err, logFile)
	}
	if b, err := os.ReadFile(link); err != nil || !strings.Contains(string(b), "hello from the talker") {
		t.Fatalf("read through the link: %q, %v", b, err)
	}
	h.removeManifest("talker.yaml")
	deadline := time.Now().Add(settle)
	for _, gone := range []string{link, dir} {
		for {
			_, err := os.Lstat(gone)
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still there %s after the pod's removal (%v)", gone, settle, err)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}

// waitFileHolding waits until the file holds substr.
func waitFileHolding(t *testing.T, path, substr string) {
	t.Helper()
	deadline := time.Now().Add(settle)
	for {
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), substr) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not hold %q after %s: %q, %v", path, substr, settle, b, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
