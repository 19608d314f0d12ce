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

	corev1 "k8s.io/api/core/v1"
)

// The deadline for anything that should take a few seconds: generous, so a
// slow machine never makes a test flaky.
const settle = 90 * time.Second

// twoContainerPod is a static pod whose containers stop promptly on SIGTERM.
func twoContainerPod(image, name, extraEnv string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %[2]s
spec:
  terminationGracePeriodSeconds: 10
  containers:
  - name: first
    image: %[1]s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
    env:
    - name: GREETING
      value: "hello %[3]s"
  - name: second
    image: %[1]s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
`, image, name, extraEnv)
}

func allReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if !cs.Ready || cs.State.Running == nil {
			return false
		}
	}
	return true
}

func TestStaticPodRunsTwoContainers(t *testing.T) {
	h := newAgentHarness(t)
	h.writeManifest("web.yaml", twoContainerPod(h.env.Image, "web", "a"))
	h.start()
	pod := h.waitPod("web", settle, "both containers running and ready", allReady)
	if len(h.runningContainers()) != 2 {
		t.Fatalf("want 2 running containers in the runtime, got %d", len(h.runningContainers()))
	}
	if pod.Status.HostIP != "127.0.0.1" || pod.Status.PodIP == "" {
		t.Fatalf("hostIP %q podIP %q", pod.Status.HostIP, pod.Status.PodIP)
	}
}

func TestContainerKilledFromOutsideIsRestarted(t *testing.T) {
	h := newAgentHarness(t)
	h.writeManifest("web.yaml", twoContainerPod(h.env.Image, "web", "a"))
	h.start()
	pod := h.waitPod("web", settle, "running", allReady)
	id := strings.TrimPrefix(pod.Status.ContainerStatuses[0].ContainerID, "containerd://")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.env.runtime(t).StopContainer(ctx, id, 0); err != nil {
		t.Fatalf("stop container from outside: %v", err)
	}
	name := pod.Status.ContainerStatuses[0].Name
	h.waitPod("web", settle, "container restarted with restartCount 1", func(p *corev1.Pod) bool {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == name {
				return cs.RestartCount == 1 && cs.State.Running != nil && cs.LastTerminationState.Terminated != nil
			}
		}
		return false
	})
}

func TestEditedManifestReplacesPod(t *testing.T) {
	h := newAgentHarness(t)
	h.writeManifest("web.yaml", twoContainerPod(h.env.Image, "web", "a"))
	h.start()
	old := h.waitPod("web", settle, "running", allReady)
	h.writeManifest("web.yaml", twoContainerPod(h.env.Image, "web", "b"))
	h.waitPod("web", settle, "replaced by a running pod with a new UID", func(p *corev1.Pod) bool {
		return p.UID != old.UID && allReady(p)
	})
	for _, c := range h.runningContainers() {
		if c.Labels["io.kubernetes.pod.uid"] == string(old.UID) {
			t.Fatalf("container %s of the old pod still runs", c.Id)
		}
	}
}

func TestDeletedManifestRemovesContainers(t *testing.T) {
	h := newAgentHarness(t)
	h.writeManifest("web.yaml", twoContainerPod(h.env.Image, "web", "a"))
	h.start()
	h.waitPod("web", settle, "running", allReady)
	if err := os.Remove(filepath.Join(h.manifests, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	// The grace period is 10s; allow well past it before failing.
	deadline := time.Now().Add(40 * time.Second)
	for len(h.runningContainers()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("containers still running 40s after the manifest was deleted: %d", len(h.runningContainers()))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestBrokenManifestBesideGoodOne(t *testing.T) {
	h := newAgentHarness(t)
	h.writeManifest("broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata: [this is not a mapping\n")
	h.writeManifest("good.yaml", twoContainerPod(h.env.Image, "good", "a"))
	h.start()
	h.waitPod("good", settle, "running beside a broken manifest", allReady)
	if !strings.Contains(h.logs.String(), "broken.yaml") {
		t.Fatalf("no log line names broken.yaml:\n%s", h.logs.String())
	}
}

func TestAgentRestartRestartsNoContainer(t *testing.T) {
	h := newAgentHarness(t)
	h.writeManifest("web.yaml", twoContainerPod(h.env.Image, "web", "a"))
	h.start()
	before := h.waitPod("web", settle, "running", allReady)
	h.stop()
	h.start()
	// Let the restarted agent relist, sync and housekeep several times.
	time.Sleep(5 * time.Second)
	after := h.waitPod("web", settle, "running after the restart", allReady)
	if before.UID != after.UID {
		t.Fatalf("pod UID changed across the restart: %s -> %s", before.UID, after.UID)
	}
	for i, cs := range after.Status.ContainerStatuses {
		b := before.Status.ContainerStatuses[i]
		if cs.ContainerID != b.ContainerID || !cs.State.Running.StartedAt.Equal(&b.State.Running.StartedAt) || cs.RestartCount != 0 {
			t.Fatalf("container %s was restarted: before %s started %v, after %s started %v restarts %d",
				cs.Name, b.ContainerID, b.State.Running.StartedAt, cs.ContainerID, cs.State.Running.StartedAt, cs.RestartCount)
		}
	}
}

func TestRestartPolicyNeverEndsWithExitCode(t *testing.T) {
	h := newAgentHarness(t)
	job := func(name, code string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  restartPolicy: Never
  containers:
  - name: job
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "exit %s"]
`, name, h.env.Image, code)
	}
	h.writeManifest("fails.yaml", job("fails", "3"))
	h.writeManifest("works.yaml", job("works", "0"))
	h.start()
	exitCode := func(p *corev1.Pod) int32 {
		if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Terminated == nil {
			return -1
		}
		return p.Status.ContainerStatuses[0].State.Terminated.ExitCode
	}
	h.waitPod("fails", settle, "phase Failed with exit code 3", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodFailed && exitCode(p) == 3
	})
	h.waitPod("works", settle, "phase Succeeded with exit code 0", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded && exitCode(p) == 0
	})
}
