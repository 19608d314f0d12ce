//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// networkWait bounds how long the node takes to follow the runtime's
// NetworkReady: the runtime check's 5 s period and 2 s timeout, and
// containerd's reload of its CNI config directory.
const networkWait = 15 * time.Second

// TestNodeNotReadyWithoutPodNetwork takes the lab's CNI config away:
// containerd reports NetworkReady=false, and the node goes Ready=False
// with the kubelet's "container runtime network not ready" message and the
// runtime's reason, then Ready again once the config is back. The lab's
// runtime has no pod network meanwhile: the config is put back in cleanup
// whatever happens.
func TestNodeNotReadyWithoutPodNetwork(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	h.joinCluster(c)
	h.start()
	waitReadyCondition(t, c, h.node, settle, true)

	confDir := labFile("cni/net.d")
	confs, err := filepath.Glob(filepath.Join(confDir, "*.conflist"))
	if err != nil || len(confs) == 0 {
		t.Fatalf("no CNI config in %s: %v", confDir, err)
	}
	// containerd reloads its CNI config on a file written in the directory,
	// not on one renamed into it: the config is taken away by removal and
	// given back by writing it again.
	saved := map[string][]byte{}
	for _, f := range confs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("read CNI config %s: %v", f, err)
		}
		saved[f] = b
	}
	restore := func() {
		for f, b := range saved {
			if _, err := os.Stat(f); err == nil {
				continue
			}
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Errorf("restore CNI config %s: %v", f, err)
			}
		}
	}
	t.Cleanup(restore)
	for _, f := range confs {
		if err := os.Remove(f); err != nil {
			t.Fatalf("remove CNI config %s: %v", f, err)
		}
	}
	removed := time.Now()
	cond := waitReadyCondition(t, c, h.node, networkWait, false)
	t.Logf("node NotReady %.1fs after the CNI config went: %s", time.Since(removed).Seconds(), cond.Message)
	if cond.Reason != "KubeletNotReady" || !strings.Contains(cond.Message, "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:") {
		t.Errorf("Ready condition %s %q, want KubeletNotReady with the runtime's network reason", cond.Reason, cond.Message)
	}

	restore()
	back := time.Now()
	waitReadyCondition(t, c, h.node, networkWait, true)
	t.Logf("node Ready %.1fs after the CNI config came back", time.Since(back).Seconds())
}

// waitReadyCondition polls the node until its Ready condition is ready (True)
// or not (False), and returns that condition.
func waitReadyCondition(t *testing.T, c clusterEnv, node string, timeout time.Duration, ready bool) corev1.NodeCondition {
	t.Helper()
	want := corev1.ConditionFalse
	if ready {
		want = corev1.ConditionTrue
	}
	var last corev1.NodeCondition
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		n, err := c.admin.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
		if err == nil {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady {
					last = cond
				}
			}
			if last.Status == want {
				return last
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("node %s: Ready is not %s within %s; last %s %q", node, want, timeout, last.Status, last.Message)
	return last
}
