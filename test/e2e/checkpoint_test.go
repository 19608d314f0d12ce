//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodekit/nodekit"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Issue 16 asks for every checkpointed pod running within 30 s of the
// agent's start and statuses right within 10 s of the API server's return.
// Speed is not asserted (a loaded machine would fail it by chance): the
// test waits generously and logs the times, which the notes report.
const (
	offlineRunDeadline = 3 * time.Minute
	statusDeadline     = time.Minute
)

// runningByPod returns the running container IDs of the agent's pods, by
// pod name.
func (h *agentHarness) runningByPod() map[string]string {
	h.t.Helper()
	out := map[string]string{}
	for _, c := range h.runningContainers() {
		out[c.Labels[noderuntime.LabelPodName]] = c.Id
	}
	return out
}

// removeAllSandboxes stops and removes every sandbox of the agent's
// instance, as a reboot leaves the node: no container, no sandbox.
func (h *agentHarness) removeAllSandboxes() int {
	h.t.Helper()
	rs := h.env.runtime(h.t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sbs, err := rs.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{noderuntime.LabelInstance: h.node}})
	if err != nil {
		h.t.Fatalf("list sandboxes: %v", err)
	}
	for _, sb := range sbs {
		if err := rs.StopPodSandbox(ctx, sb.Id); err != nil {
			h.t.Fatalf("stop sandbox %s: %v", sb.Id, err)
		}
		if err := rs.RemovePodSandbox(ctx, sb.Id); err != nil {
			h.t.Fatalf("remove sandbox %s: %v", sb.Id, err)
		}
	}
	return len(sbs)
}

// checkpointed lists the pod UIDs in the agent's checkpoint.
func (h *agentHarness) checkpointed() []string {
	h.t.Helper()
	entries, err := os.ReadDir(filepath.Join(h.rootDir, "pod-checkpoints"))
	if err != nil {
		h.t.Fatalf("read the checkpoint: %v", err)
	}
	var out []string
	for _, e := range entries {
		if uid, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			out = append(out, uid)
		}
	}
	sort.Strings(out)
	return out
}

// controlPlane runs control-plane-up.sh or -down.sh for the API server
// alone (etcd keeps its data), with the lab's environment.
func controlPlane(t *testing.T, script string) {
	t.Helper()
	if out, err := exec.Command("bash", script, "--apiserver-only").CombinedOutput(); err != nil {
		t.Fatalf("%s --apiserver-only: %v\n%s", script, err, out)
	}
}

// createAPIPods creates running busybox pods bound to the agent's node and
// waits until the API server shows each Running; it returns their UIDs.
func createAPIPods(t *testing.T, c clusterEnv, h *agentHarness, ns string, names ...string) map[string]types.UID {
	t.Helper()
	uids := map[string]types.UID{}
	for _, name := range names {
		p, err := c.admin.CoreV1().Pods(ns).Create(context.Background(), h.apiPod(ns, name, 2), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uids[name] = p.UID
	}
	for _, name := range names {
		waitAPIPod(t, c, ns, name, settle, "Running", apiRunning)
	}
	return uids
}

func TestCheckpointRebootWithTheAPIServerDown(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	kept := []string{"web", "worker", "cache"}
	uids := createAPIPods(t, c, h, ns, append(kept, "doomed")...)
	within(t, settle, "every pod checkpointed", func() bool { return len(h.checkpointed()) == 4 })

	// The agent stops; while it is away the pod "doomed" is deleted (grace
	// 0: gone from the API at once); then the node reboots (every sandbox
	// goes) and comes up with its API server unreachable.
	h.stop()
	zero := int64(0)
	if err := c.admin.CoreV1().Pods(ns).Delete(context.Background(), "doomed", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitAPIPod(t, c, ns, "doomed", settle, "gone", func(_ *corev1.Pod, err error) bool { return apierrors.IsNotFound(err) })
	if n := h.removeAllSandboxes(); n < 4 {
		t.Fatalf("removed %d sandboxes, want at least 4", n)
	}
	controlPlane(t, c.down)
	apiUp := false
	defer func() {
		if !apiUp {
			controlPlane(t, c.up)
		}
	}()

	h.start()
	offline := map[string]string{}
	took := within(t, offlineRunDeadline, "every checkpointed pod running again with the API server down", func() bool {
		offline = h.runningByPod()
		return len(offline) == 4
	})
	t.Logf("API server down: every checkpointed pod running %s after the agent started", took.Round(100*time.Millisecond))
	if !strings.Contains(h.logs.String(), "running the checkpointed pods offline") {
		t.Fatal("the agent did not log that it serves the checkpoint offline")
	}
	// The restart counts the agent reports offline: the reboot restarted
	// each container once (as the kubelet counts a container it cannot
	// find any more); the reconnect must not add to them.
	restarts := map[string]int32{}
	within(t, settle, "the agent to report every offline pod Running", func() bool {
		pods, err := h.pods()
		if err != nil {
			return false
		}
		for _, p := range pods {
			if len(p.Status.ContainerStatuses) == 1 && strings.HasSuffix(p.Status.ContainerStatuses[0].ContainerID, offline[p.Name]) {
				restarts[p.Name] = p.Status.ContainerStatuses[0].RestartCount
			}
		}
		return len(restarts) == 4
	})
	// Nothing is killed while offline: housekeeping runs with the
	// checkpoint as the API source's pods.
	for range 10 {
		if got := h.runningByPod(); len(got) != 4 {
			t.Fatalf("running pods while offline = %v, want all 4 of the checkpoint", got)
		}
		time.Sleep(500 * time.Millisecond)
	}

	controlPlane(t, c.up)
	apiUp = true
	back := time.Now()
	c = loadCluster(t)
	for _, name := range kept {
		p := waitAPIPod(t, c, ns, name, statusDeadline, "Running with the container started offline", func(p *corev1.Pod, err error) bool {
			return apiRunning(p, err) && strings.HasSuffix(p.Status.ContainerStatuses[0].ContainerID, offline[name])
		})
		if p.UID != uids[name] {
			t.Fatalf("pod %s recreated: UID %s, was %s", name, p.UID, uids[name])
		}
	}
	statuses := time.Since(back)
	t.Logf("API server back: statuses right %s after it answered", statuses.Round(100*time.Millisecond))
	within(t, time.Minute, "the pod deleted during the outage terminated", func() bool {
		_, running := h.runningByPod()["doomed"]
		return !running
	})
	t.Logf("API server back: the deleted pod terminated %s after it answered", time.Since(back).Round(100*time.Millisecond))
	now := h.runningByPod()
	for _, name := range kept {
		if now[name] != offline[name] {
			t.Fatalf("pod %s's container changed after the reconnect: %s -> %s", name, offline[name], now[name])
		}
	}
	for _, name := range kept {
		p := waitAPIPod(t, c, ns, name, settle, "still Running", apiRunning)
		if rc := p.Status.ContainerStatuses[0].RestartCount; rc != restarts[name] {
			t.Fatalf("pod %s restart count %d after the reconnect, want the %d it had offline", name, rc, restarts[name])
		}
	}
	within(t, settle, "the deleted pod gone from the checkpoint", func() bool { return len(h.checkpointed()) == 3 })
}

func TestCheckpointAgentRestartWithTheAPIServerUpChangesNothing(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	names := []string{"one", "two"}
	uids := createAPIPods(t, c, h, ns, names...)
	within(t, settle, "every pod checkpointed", func() bool { return len(h.checkpointed()) == 2 })
	before := h.runningByPod()

	h.stop()
	h.logs = &syncBuffer{}
	h.start()
	// Longer than the checkpoint's wait for the API server: an offline
	// snapshot would have come by now.
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if got := h.runningByPod(); len(got) != 2 || got["one"] != before["one"] || got["two"] != before["two"] {
			t.Fatalf("running containers after the restart = %v, want the same as before %v", got, before)
		}
		time.Sleep(500 * time.Millisecond)
	}
	logs := h.logs.String()
	if strings.Contains(logs, "checkpointed pods offline") {
		t.Fatal("the agent served its checkpoint with the API server up")
	}
	apiFirst := 0
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "Pod source delivered its first snapshot") && strings.Contains(line, `"source"="api"`) {
			apiFirst++
		}
	}
	if apiFirst != 1 {
		t.Fatalf("the API source delivered %d first snapshots after the restart, want 1:\n%s", apiFirst, logs)
	}
	pods, err := h.pods()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, p := range pods {
		seen[p.Name]++
	}
	for _, name := range names {
		if seen[name] != 1 {
			t.Fatalf("pod %s listed %d times by the agent, want once: %v", name, seen[name], seen)
		}
		p := waitAPIPod(t, c, ns, name, settle, "Running", apiRunning)
		if p.UID != uids[name] || p.Status.ContainerStatuses[0].RestartCount != 0 || !strings.HasSuffix(p.Status.ContainerStatuses[0].ContainerID, before[name]) {
			t.Fatalf("pod %s after the restart: %s, want uid %s and container %s without restarts", name, describe(p), uids[name], before[name])
		}
	}
	if got := h.checkpointed(); len(got) != 2 {
		t.Fatalf("checkpoint after the restart = %v, want the 2 pods", got)
	}
}

func TestCheckpointOffRunsNoAPIPodWithTheAPIServerDown(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	h.configure = func(cfg *nodekit.Config) { cfg.DisablePodCheckpoint = true }
	ns := h.joinCluster(c)
	h.start()
	uids := createAPIPods(t, c, h, ns, "web")
	h.stop()
	if _, err := os.Stat(filepath.Join(h.rootDir, "pod-checkpoints")); !os.IsNotExist(err) {
		t.Fatalf("the checkpoint directory exists with the checkpoint off (stat: %v)", err)
	}
	if _, err := os.Stat(filepath.Join(h.rootDir, "pod-checkpoint-objects")); !os.IsNotExist(err) {
		t.Fatalf("offline copies of the pods' objects exist with the checkpoint off (stat: %v)", err)
	}
	h.removeAllSandboxes()
	controlPlane(t, c.down)
	apiUp := false
	defer func() {
		if !apiUp {
			controlPlane(t, c.up)
		}
	}()
	h.start()
	// Twice the checkpoint's wait: with it off, the kubelet's behaviour.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if got := h.runningByPod(); len(got) != 0 {
			t.Fatalf("API pods run with the API server down and the checkpoint off: %v", got)
		}
		time.Sleep(time.Second)
	}
	controlPlane(t, c.up)
	apiUp = true
	c = loadCluster(t)
	p := waitAPIPod(t, c, ns, "web", settle, "Running again once the API server answered", apiRunning)
	if p.UID != uids["web"] {
		t.Fatalf("pod recreated: UID %s, was %s", p.UID, uids["web"])
	}
}
