//go:build e2e

package e2e

import (
	"net/http"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// faultAgent starts an agent joined to the control plane on the disruptable
// containerd, with n static pods running, and returns it with the runtime's
// snapshot of them.
func faultAgent(t *testing.T, n int) (faultLab, clusterEnv, *agentHarness, runtimeSnapshot) {
	t.Helper()
	lab := loadFaultLab(t)
	cluster := loadCluster(t)
	h := newAgentHarnessOn(t, lab.testEnv)
	h.joinCluster(cluster)
	names := writeSleepers(h, "steady", n)
	h.start()
	allRunning(h, names, 2*time.Minute)
	within(t, time.Minute, "the node to be Ready", func() bool { return nodeReadyStatus(cluster, h.node) == corev1.ConditionTrue })
	within(t, 30*time.Second, "/healthz/runtime to pass", func() bool { return h.healthz("runtime") == http.StatusOK })
	before := snapshot(t, lab.runtime(t), h.node)
	if why := before.unhealthy(n); why != "" {
		t.Fatalf("before the fault: %s (%s)", why, before)
	}
	return lab, cluster, h, before
}

// TestContainerdSIGKILLLosesNoContainer kills the disruptable containerd
// with SIGKILL (its shims live on), keeps it down until the agent reports
// it, and starts it again with the same config: /healthz/runtime and the
// node's Ready condition fail while it is down and pass again after, and no
// container is lost, duplicated or restarted.
func TestContainerdSIGKILLLosesNoContainer(t *testing.T) {
	lab, cluster, h, before := faultAgent(t, 4)
	restart := lab.kill(t, syscall.SIGKILL)
	d := within(t, 15*time.Second, "/healthz/runtime to fail while containerd is dead", func() bool {
		return h.healthz("runtime") == http.StatusInternalServerError
	})
	n := within(t, 15*time.Second, "the node's Ready to go False", func() bool {
		return nodeReadyStatus(cluster, h.node) == corev1.ConditionFalse
	})
	if code := h.healthz(""); code != http.StatusOK {
		t.Errorf("/healthz = %d while containerd is dead, want 200: the runtime's health goes into the node's Ready condition", code)
	}
	t.Logf("dead containerd: /healthz/runtime failed after %v, node Ready False after %v", d.Round(100*time.Millisecond), (d + n).Round(100*time.Millisecond))
	restart()
	within(t, 30*time.Second, "/healthz/runtime to pass again", func() bool { return h.healthz("runtime") == http.StatusOK })
	within(t, time.Minute, "the node to be Ready again", func() bool { return nodeReadyStatus(cluster, h.node) == corev1.ConditionTrue })
	stays(t, h, lab.runtime(t), 10*time.Second, before, nil)
}

// TestContainerdSIGSTOPFor60sIsReportedAndRestartsNothing stops the
// disruptable containerd for 60s: within 15s /healthz/runtime fails and the
// node's Ready condition goes False, /healthz and the sync loop stay ok
// throughout, and after SIGCONT both pass again and nothing was restarted.
func TestContainerdSIGSTOPFor60sIsReportedAndRestartsNothing(t *testing.T) {
	lab, cluster, h, before := faultAgent(t, 4)
	cont := lab.stop(t)
	stopped := time.Now()
	healthzAt := within(t, 15*time.Second, "/healthz/runtime to fail while containerd is stopped", func() bool {
		return h.healthz("runtime") == http.StatusInternalServerError
	})
	readyAt := within(t, 15*time.Second, "the node's Ready to go False", func() bool {
		return nodeReadyStatus(cluster, h.node) == corev1.ConditionFalse
	}) + healthzAt
	t.Logf("SIGSTOPped containerd: /healthz/runtime failed after %v, node Ready False after %v",
		healthzAt.Round(100*time.Millisecond), readyAt.Round(100*time.Millisecond))
	for time.Since(stopped) < 60*time.Second {
		if code := h.healthz("runtime"); code != http.StatusInternalServerError {
			t.Fatalf("/healthz/runtime = %d %v into the stop, want 500", code, time.Since(stopped).Round(time.Second))
		}
		if code := h.healthz("syncloop"); code != http.StatusOK {
			t.Fatalf("/healthz/syncloop = %d while containerd is stopped, want 200", code)
		}
		// The aggregate leaves the runtime out, as the kubelet's does
		// (h/nodeapi, merged): a supervisor must not restart the agent for
		// the runtime's fault.
		if code := h.healthz(""); code != http.StatusOK {
			t.Fatalf("/healthz = %d while containerd is stopped, want 200", code)
		}
		if s := nodeReadyStatus(cluster, h.node); s != corev1.ConditionFalse {
			t.Fatalf("node Ready = %q %v into the stop, want False", s, time.Since(stopped).Round(time.Second))
		}
		time.Sleep(500 * time.Millisecond)
	}
	cont()
	back := time.Now()
	within(t, 30*time.Second, "/healthz/runtime to pass after SIGCONT", func() bool { return h.healthz("runtime") == http.StatusOK })
	within(t, time.Minute, "the node to be Ready after SIGCONT", func() bool { return nodeReadyStatus(cluster, h.node) == corev1.ConditionTrue })
	t.Logf("after SIGCONT: healthy and Ready again within %v", time.Since(back).Round(100*time.Millisecond))
	stays(t, h, lab.runtime(t), 10*time.Second, before, nil)
}
