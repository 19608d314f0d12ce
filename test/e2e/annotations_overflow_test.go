//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodekit/nodekit"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Figures of TestLargeAnnotationsNeitherBreakRelistsNorKeepRemovedPods.
const (
	// overflowPods of overflowAnnotation bytes each: 20 MB of annotations,
	// over gRPC's 16 MiB if the sandboxes carried them.
	overflowPods       = 80
	overflowAnnotation = 250_000
	// overflowGrace is the pods' grace period.
	overflowGrace = 30 * time.Second
)

// annotatedPod is a one-container static pod that stops on TERM, with one
// annotation of size bytes.
func annotatedPod(image, name string, size int) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %[2]s
  annotations:
    example.com/blob: "%[3]s"
    kubernetes.io/ingress-bandwidth: 10M
spec:
  terminationGracePeriodSeconds: %[4]d
  containers:
  - name: main
    image: %[1]s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
`, image, name, strings.Repeat("x", size), int(overflowGrace/time.Second))
}

// TestLargeAnnotationsNeitherBreakRelistsNorKeepRemovedPods runs 80 static
// pods with a 250,000-byte annotation each (valid: under 256 KiB). The
// sandboxes must not carry that annotation (80 of them made every
// ListPodSandbox answer exceed gRPC's 16 MiB, so every relist failed, and
// the pods of removed manifests were never stopped); the short one a CNI
// plugin reads must. Once the manifests are removed every container stops
// on its TERM, within the grace period, and no relist ever fails.
func TestLargeAnnotationsNeitherBreakRelistsNorKeepRemovedPods(t *testing.T) {
	h := newAgentHarness(t)
	h.configure = func(c *nodekit.Config) {
		// Keep the exited containers to read their exit codes.
		c.Agent.ContainerGCPeriod = time.Hour
	}
	for i := range overflowPods {
		h.writeManifest(fmt.Sprintf("big-%02d.yaml", i), annotatedPod(h.env.Image, fmt.Sprintf("big-%02d", i), overflowAnnotation))
	}
	start := time.Now()
	h.start()
	waitRunning(t, h, overflowPods, 15*time.Minute)
	t.Logf("%d pods running %s after the agent started", overflowPods, time.Since(start).Round(time.Second))
	checkSandboxAnnotations(t, h)

	removed := time.Now()
	for i := range overflowPods {
		if err := os.Remove(filepath.Join(h.manifests, fmt.Sprintf("big-%02d.yaml", i))); err != nil {
			t.Fatal(err)
		}
	}
	waitRunning(t, h, 0, 10*time.Minute)
	t.Logf("every container stopped %s after the manifests were removed", time.Since(removed).Round(time.Second))
	checkStoppedOnTerm(t, h, removed)

	// A few relists more: none may fail, before or after the removal.
	time.Sleep(5 * time.Second)
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(line, "Unable to list pods") || strings.Contains(line, "ResourceExhausted") {
			t.Fatalf("a relist failed: %s", line)
		}
	}
}

// waitRunning polls until the agent's pods have exactly n running
// containers.
func waitRunning(t *testing.T, h *agentHarness, n int, timeout time.Duration) {
	t.Helper()
	got := -1
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(time.Second) {
		if got = len(h.runningContainers()); got == n {
			return
		}
	}
	t.Fatalf("%d running containers after %s, want %d", got, timeout, n)
}

// checkSandboxAnnotations checks, through the runtime, that the sandboxes
// carry the small annotation and not the large one, and that a listing of
// every sandbox of the agent fits in one message.
func checkSandboxAnnotations(t *testing.T, h *agentHarness) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sbs, err := h.env.runtime(t).ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{noderuntime.LabelInstance: h.node}})
	if err != nil {
		t.Fatalf("list the agent's sandboxes: %v", err)
	}
	if len(sbs) != overflowPods {
		t.Fatalf("%d sandboxes, want %d", len(sbs), overflowPods)
	}
	for _, sb := range sbs {
		a := sb.GetAnnotations()
		if _, ok := a["example.com/blob"]; ok || a["kubernetes.io/ingress-bandwidth"] != "10M" {
			t.Fatalf("sandbox %s annotations: blob present %t, bandwidth %q; want no blob and 10M", sb.GetId(), ok, a["kubernetes.io/ingress-bandwidth"])
		}
	}
}

// checkStoppedOnTerm checks that every container of the agent exited with
// code 0: it stopped on its TERM trap, within the grace period (one killed
// at the end of it exits 137). It logs the latest exit after removed.
func checkStoppedOnTerm(t *testing.T, h *agentHarness, removed time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rs := h.env.runtime(t)
	cs, err := rs.ListContainers(ctx, &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{noderuntime.LabelInstance: h.node}})
	if err != nil {
		t.Fatalf("list the agent's containers: %v", err)
	}
	if len(cs) != overflowPods {
		t.Fatalf("%d containers left, want the %d exited ones", len(cs), overflowPods)
	}
	var latest time.Duration
	for _, c := range cs {
		st, err := rs.ContainerStatus(ctx, c.GetId(), false)
		if err != nil {
			t.Fatalf("status of container %s: %v", c.GetId(), err)
		}
		s := st.GetStatus()
		took := time.Unix(0, s.GetFinishedAt()).Sub(removed)
		latest = max(latest, took)
		if s.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED || s.GetExitCode() != 0 {
			t.Errorf("container %s of %s: state %v exit code %d, %s after the removal; want exited 0 (on TERM, within the grace period)",
				c.GetId(), c.GetLabels()[noderuntime.LabelPodName], s.GetState(), s.GetExitCode(), took)
		}
	}
	t.Logf("the last container exited %s after the manifests were removed", latest.Round(100*time.Millisecond))
}

// TestOversizedSandboxesOfAnEarlierAgentAreListedPodByPod starts an agent
// beside 80 running pods that an earlier agent (or the kubelet's rule)
// created with a 250,000-byte sandbox annotation each: a listing of all of
// them is over gRPC's 16 MiB. The agent lists pod by pod instead, logs that
// once, never fails a relist, and stops the pods, which it does not know.
func TestOversizedSandboxesOfAnEarlierAgentAreListedPodByPod(t *testing.T) {
	h := newAgentHarness(t)
	rs := h.env.runtime(t)
	ctx := context.Background()
	var ids []string
	t.Cleanup(func() {
		// The harness's cleanup lists every sandbox of the agent at once,
		// which these overflow: remove them by ID first.
		for _, id := range ids {
			_ = rs.StopPodSandbox(ctx, id)
			_ = rs.RemovePodSandbox(ctx, id)
		}
	})
	logs := t.TempDir()
	for i := range overflowPods {
		name, uid := fmt.Sprintf("old-%02d", i), fmt.Sprintf("old-%02d-%d", i, time.Now().UnixNano())
		labels := map[string]string{noderuntime.LabelInstance: h.node, noderuntime.LabelPodUID: uid,
			noderuntime.LabelPodName: name, noderuntime.LabelPodNamespace: "default"}
		sbCfg := &runtimeapi.PodSandboxConfig{
			Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: uid},
			Labels:       labels,
			Annotations:  map[string]string{"example.com/blob": strings.Repeat("x", overflowAnnotation)},
			LogDirectory: filepath.Join(logs, name),
			Linux:        &runtimeapi.LinuxPodSandboxConfig{CgroupParent: h.env.CgroupParent + "/" + uid},
		}
		sb, err := rs.RunPodSandbox(ctx, sbCfg, "")
		if err != nil {
			t.Fatalf("run sandbox %d: %v", i, err)
		}
		ids = append(ids, sb)
		cLabels := map[string]string{noderuntime.LabelContainerName: "main"}
		for k, v := range labels {
			cLabels[k] = v
		}
		id, err := rs.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "main"},
			Image:    &runtimeapi.ImageSpec{Image: h.env.Image},
			Command:  []string{"sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"},
			Labels:   cLabels,
			LogPath:  "main.log",
		}, sbCfg)
		if err != nil {
			t.Fatalf("create container %d: %v", i, err)
		}
		if err := rs.StartContainer(ctx, id); err != nil {
			t.Fatalf("start container %d: %v", i, err)
		}
	}
	if _, err := rs.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{noderuntime.LabelInstance: h.node}}); err == nil {
		t.Fatal("a listing of the 80 sandboxes fit in one message: the test proves nothing")
	}
	start := time.Now()
	h.start()
	waitRunning(t, h, 0, 10*time.Minute)
	t.Logf("the agent stopped the %d pods it does not know %s after it started", overflowPods, time.Since(start).Round(time.Second))
	time.Sleep(5 * time.Second)
	split := 0
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(line, "Unable to list pods") {
			t.Fatalf("a relist failed: %s", line)
		}
		if strings.Contains(line, "listing pod by pod") {
			split++
		}
	}
	if split != 1 {
		t.Errorf("%d log lines say the agent lists pod by pod, want 1", split)
	}
}
