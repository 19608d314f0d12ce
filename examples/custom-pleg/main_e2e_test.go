//go:build e2e

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/pleg"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// TestCustomPLEGRunsPodsAndDefaultNeverStarts runs the agent with the
// SnapshotPLEG swapped in on the private containerd (hack/containerd-up.sh):
// a static pod reaches Running, a container stopped from outside is
// restarted, and the default generic PLEG never relists.
func TestCustomPLEGRunsPodsAndDefaultNeverStarts(t *testing.T) {
	endpoint, image := os.Getenv("NODEKIT_CRI_ENDPOINT"), os.Getenv("NODEKIT_TEST_IMAGE")
	if endpoint == "" || image == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("NODEKIT_CRI_ENDPOINT/NODEKIT_TEST_IMAGE unset: run hack/containerd-up.sh and source its env file")
		}
		t.Skip("no private containerd: run hack/containerd-up.sh and source /var/lib/nodekit-test/env")
	}
	dir := t.TempDir()
	writePod(t, filepath.Join(dir, "manifests"), image)
	cfg := nodekit.DefaultConfig()
	cfg.NodeName = fmt.Sprintf("custom-pleg-%d", time.Now().UnixNano()%100000)
	cfg.RootDir, cfg.Manifests, cfg.RuntimeEndpoint = filepath.Join(dir, "root"), filepath.Join(dir, "manifests"), endpoint
	cfg.CRI.CgroupParent = os.Getenv("NODEKIT_CGROUP_PARENT")
	cfg.Server.Port = 0

	var (
		replaced pleg.Interface
		custom   *SnapshotPLEG
		a        *agent.Agent
		rt       noderuntime.Runtime
	)
	swap := fx.Decorate(func(def pleg.Interface, rt noderuntime.Runtime, cache *pleg.Cache, clk clock.WithTicker, log logr.Logger) pleg.Interface {
		replaced = def
		custom = NewSnapshotPLEG(rt, cache, clk, log, 200*time.Millisecond)
		return custom
	})
	app := nodekit.New(cfg, testr.New(t), nodekit.Defaults(), swap, fx.Populate(&a, &rt))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { stopAndRemove(t, app, rt) })

	pod := waitFor(t, a, "the pod to run", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].Ready
	})
	id, err := noderuntime.ParseContainerID(pod.Status.ContainerStatuses[0].ContainerID)
	if err != nil {
		t.Fatal(err)
	}
	stopContainer(t, endpoint, id.ID)
	waitFor(t, a, "the stopped container to be restarted", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount == 1 && cs[0].State.Running != nil
	})
	generic, ok := replaced.(*pleg.Generic)
	if !ok {
		t.Fatalf("the replaced PLEG is a %T, want the default *pleg.Generic", replaced)
	}
	if !generic.LastRelist().IsZero() {
		t.Fatalf("the default PLEG relisted at %v although it was swapped out", generic.LastRelist())
	}
	if custom.LastInspection().IsZero() {
		t.Fatal("the custom PLEG never inspected the runtime")
	}
}

func writePod(t *testing.T, dir, image string) {
	t.Helper()
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: snapshot
spec:
  terminationGracePeriodSeconds: 5
  containers:
  - name: main
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
`, image)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "snapshot.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls the agent's pods until one satisfies cond; it fails after a
// generous deadline.
func waitFor(t *testing.T, a *agent.Agent, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		for _, p := range a.GetPods() {
			if cond(p) {
				return p
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s; pods: %+v", what, a.GetPods())
	return nil
}
