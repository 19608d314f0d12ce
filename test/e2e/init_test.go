//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// orderedPod has two init containers around a sidecar; the first writes a
// file into an emptyDir that the main container prints. main takes 2s to
// exit on SIGTERM, the sidecar none, so that a sidecar stopped alongside main
// would finish first.
func orderedPod(image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: ordered
spec:
  terminationGracePeriodSeconds: 20
  volumes:
  - name: shared
    emptyDir: {}
  initContainers:
  - name: first
    image: %[1]s
    command: ["sh", "-c", "echo hello-from-init > /shared/greeting; sleep 1"]
    volumeMounts: [{name: shared, mountPath: /shared}]
  - name: side
    image: %[1]s
    restartPolicy: Always
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
  - name: second
    image: %[1]s
    command: ["sh", "-c", "sleep 1"]
  containers:
  - name: main
    image: %[1]s
    command: ["sh", "-c", "cat /shared/greeting; trap 'sleep 2; exit 0' TERM; sleep 3600 & wait"]
    volumeMounts: [{name: shared, mountPath: /shared, readOnly: true}]
`, image)
}

func TestInitContainersAndSidecarRunAndStopInOrder(t *testing.T) {
	h := newAgentHarness(t)
	h.writeManifest("ordered.yaml", orderedPod(h.env.Image))
	h.start()
	pod := h.waitPod("ordered", settle, "initialized and running", func(p *corev1.Pod) bool {
		main := statusOf(p, "main")
		return p.Status.Phase == corev1.PodRunning && main != nil && main.State.Running != nil
	})
	if podCondition(pod, corev1.PodInitialized) != corev1.ConditionTrue || podCondition(pod, corev1.PodReady) != corev1.ConditionTrue {
		t.Errorf("conditions %+v, want Initialized and Ready", pod.Status.Conditions)
	}
	first, side, second, main := statusOf(pod, "first"), statusOf(pod, "side"), statusOf(pod, "second"), statusOf(pod, "main")
	if first.State.Terminated == nil || first.State.Terminated.ExitCode != 0 || second.State.Terminated == nil ||
		side.State.Running == nil || !*side.Started || !side.Ready {
		t.Fatalf("init statuses: first %+v, side %+v, second %+v", first.State, side, second.State)
	}
	// The API's timestamps (seconds) already show the order.
	notBefore(t, "first finished before side started", first.State.Terminated.FinishedAt.Time, side.State.Running.StartedAt.Time)
	notBefore(t, "side started before second started", side.State.Running.StartedAt.Time, second.State.Terminated.StartedAt.Time)
	notBefore(t, "second finished before main started", second.State.Terminated.FinishedAt.Time, main.State.Running.StartedAt.Time)
	// The runtime's nanoseconds prove it.
	cri := h.criContainers(string(pod.UID))
	notBefore(t, "first finished before side started (CRI)", cri["first"].finished, cri["side"].started)
	notBefore(t, "side started before second started (CRI)", cri["side"].started, cri["second"].started)
	notBefore(t, "second finished before main started (CRI)", cri["second"].finished, cri["main"].started)
	if log := h.containerLog(pod, "main"); !strings.Contains(log, "hello-from-init") {
		t.Errorf("main did not read the init container's file from the emptyDir; log: %q", log)
	}

	if err := os.Remove(filepath.Join(h.manifests, "ordered.yaml")); err != nil {
		t.Fatal(err)
	}
	h.waitNoRunningContainers(40 * time.Second)
	cri = h.criContainers(string(pod.UID))
	t.Logf("main finished %s, side finished %s", cri["main"].finished.Format(time.RFC3339Nano), cri["side"].finished.Format(time.RFC3339Nano))
	notBefore(t, "main stopped before the sidecar", cri["main"].finished, cri["side"].finished)
	if d := cri["side"].finished.Sub(cri["main"].finished); d > 10*time.Second {
		t.Errorf("the sidecar stopped %s after main: it should get SIGTERM as soon as main exits", d)
	}
}

func TestJobWithASidecarSucceeds(t *testing.T) {
	h := newAgentHarness(t)
	h.writeManifest("job.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: job
spec:
  restartPolicy: Never
  initContainers:
  - name: proxy
    image: %[1]s
    restartPolicy: Always
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
  containers:
  - name: work
    image: %[1]s
    command: ["sh", "-c", "sleep 1; exit 0"]
`, h.env.Image))
	h.start()
	pod := h.waitPod("job", settle, "phase Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	work, proxy := statusOf(pod, "work"), statusOf(pod, "proxy")
	if work.State.Terminated == nil || work.State.Terminated.ExitCode != 0 {
		t.Errorf("work = %+v, want terminated with 0", work.State)
	}
	if proxy.State.Terminated == nil {
		t.Errorf("proxy = %+v, want the sidecar stopped", proxy.State)
	}
	if podCondition(pod, corev1.PodInitialized) != corev1.ConditionTrue {
		t.Errorf("Initialized = %s, want True", podCondition(pod, corev1.PodInitialized))
	}
	h.waitNoRunningContainers(30 * time.Second)
}

func TestTerminationMessageAppearsInStatus(t *testing.T) {
	h := newAgentHarness(t)
	pod := func(name, policy, script string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: %s
    terminationMessagePolicy: %s
    command: ["sh", "-c", %q]
`, name, h.env.Image, policy, script)
	}
	h.writeManifest("file.yaml", pod("file", "File", "echo -n goodbye > /dev/termination-log; exit 3"))
	h.writeManifest("logs.yaml", pod("logs", "FallbackToLogsOnError", "echo from the logs; exit 4"))
	h.start()
	message := func(name string) string {
		p := h.waitPod(name, settle, "phase Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
		if c := statusOf(p, "c"); c != nil && c.State.Terminated != nil {
			return c.State.Terminated.Message
		}
		return ""
	}
	if got := message("file"); got != "goodbye" {
		t.Errorf("message from the file = %q, want %q", got, "goodbye")
	}
	if got := message("logs"); got != "from the logs\n" {
		t.Errorf("message from the logs = %q, want %q", got, "from the logs\n")
	}
}
