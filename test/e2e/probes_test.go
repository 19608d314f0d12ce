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

func TestLivenessExecProbeThatStartsFailingRestartsTheContainer(t *testing.T) {
	h := newAgentHarness(t)
	// Healthy for 3s after each start, then failing. The probe's own grace
	// period (1s, raised to the 2s minimum) replaces the pod's 30s.
	h.writeManifest("live.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: live}
spec:
  terminationGracePeriodSeconds: 30
  containers:
  - name: main
    image: %s
    command: ["sh", "-c", "touch /tmp/healthy; sleep 3; rm /tmp/healthy; sleep 3600"]
    livenessProbe:
      exec: {command: ["cat", "/tmp/healthy"]}
      periodSeconds: 1
      failureThreshold: 1
      terminationGracePeriodSeconds: 1
`, h.env.Image))
	h.start()
	pod := h.waitPod("live", settle, "restarted twice after failing its liveness probe", func(p *corev1.Pod) bool {
		return restarts(p, "main") >= 2
	})
	last := statusOf(pod, "main").LastTerminationState.Terminated
	if last == nil || last.ExitCode != 137 || last.Reason != "Error" {
		t.Fatalf("lastState = %+v, want terminated by SIGKILL (137, Error)", statusOf(pod, "main").LastTerminationState)
	}
	logs := h.logs.String()
	for _, want := range []string{`"reason"="Unhealthy"`, "Liveness probe failed", "Container main failed liveness probe, will be restarted"} {
		if !strings.Contains(logs, want) {
			t.Errorf("agent log lacks %q", want)
		}
	}
}

func TestReadinessProbeThatFlipsTogglesTheReadyCondition(t *testing.T) {
	h := newAgentHarness(t)
	h.writeManifest("ready.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: ready}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: %s
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
    readinessProbe:
      exec: {command: ["cat", "/tmp/ready"]}
      periodSeconds: 1
      failureThreshold: 1
`, h.env.Image))
	h.start()
	notReady := func(p *corev1.Pod) bool {
		cond, c := ready(p, "main")
		return p.Status.Phase == corev1.PodRunning && cond == corev1.ConditionFalse && !c &&
			podCondition(p, corev1.ContainersReady) == corev1.ConditionFalse
	}
	isReady := func(p *corev1.Pod) bool {
		cond, c := ready(p, "main")
		return cond == corev1.ConditionTrue && c && podCondition(p, corev1.ContainersReady) == corev1.ConditionTrue
	}
	pod := h.waitPod("ready", settle, "running and not ready", notReady)
	h.execIn(pod, "main", "touch", "/tmp/ready")
	pod = h.waitPod("ready", 30*time.Second, "ready once the probe passes", isReady)
	h.execIn(pod, "main", "rm", "/tmp/ready")
	pod = h.waitPod("ready", 30*time.Second, "unready once the probe fails", notReady)
	if restarts(pod, "main") != 0 {
		t.Fatalf("a readiness failure restarted the container: %s", describe(pod))
	}
}

func TestHTTPGetLivenessProbeAgainstAServerInTheContainer(t *testing.T) {
	h := newAgentHarness(t)
	port := freePort(t)
	h.writeManifest("web.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
  - name: httpd
    image: %s
    command: ["sh", "-c", "mkdir -p /www && echo ok > /www/healthz && exec httpd -f -p 127.0.0.1:%d -h /www"]
    ports: [{name: http, containerPort: %d}]
    livenessProbe:
      httpGet: {path: /healthz, port: http}
      periodSeconds: 1
      failureThreshold: 2
`, h.env.Image, port, port))
	h.start()
	pod := h.waitPod("web", settle, "running", func(p *corev1.Pod) bool {
		st := statusOf(p, "httpd")
		return st != nil && st.State.Running != nil
	})
	// Passing probes for a few periods restart nothing.
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		if p := h.findPod("web"); p != nil && restarts(p, "httpd") != 0 {
			t.Fatalf("a passing httpGet probe restarted the container: %s", describe(p))
		}
		time.Sleep(200 * time.Millisecond)
	}
	h.execIn(pod, "httpd", "rm", "/www/healthz")
	pod = h.waitPod("web", time.Minute, "restarted after the server answered 404", func(p *corev1.Pod) bool {
		st := statusOf(p, "httpd")
		return restarts(p, "httpd") >= 1 && st.State.Running != nil
	})
	if statusOf(pod, "httpd").LastTerminationState.Terminated == nil {
		t.Fatalf("no last state after the restart: %s", describe(pod))
	}
}

func TestPreStopRunsBeforeTheStopAndAHangingOneIsCutAtTheGracePeriod(t *testing.T) {
	h := newAgentHarness(t)
	out := t.TempDir()
	h.writeManifest("hooks.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: hooks}
spec:
  terminationGracePeriodSeconds: 20
  volumes: [{name: out, hostPath: {path: %[2]s, type: Directory}}]
  containers:
  - name: main
    image: %[1]s
    command: ["sh", "-c", "trap 'echo term >> /out/log; exit 0' TERM; sleep 3600 & wait"]
    volumeMounts: [{name: out, mountPath: /out}]
    lifecycle:
      postStart: {exec: {command: ["sh", "-c", "echo poststart >> /out/log"]}}
      preStop: {exec: {command: ["sh", "-c", "echo prestop >> /out/log"]}}
`, h.env.Image, out))
	h.writeManifest("hang.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: hang}
spec:
  terminationGracePeriodSeconds: 3
  containers:
  - name: main
    image: %s
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
    lifecycle:
      preStop: {exec: {command: ["sleep", "3600"]}}
`, h.env.Image))
	h.start()
	for _, name := range []string{"hooks", "hang"} {
		h.waitPod(name, settle, "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	}
	start := time.Now()
	for _, f := range []string{"hooks.yaml", "hang.yaml"} {
		if err := os.Remove(filepath.Join(h.manifests, f)); err != nil {
			t.Fatal(err)
		}
	}
	h.waitNoRunningContainers(30 * time.Second)
	took := time.Since(start)
	// The hanging hook holds its container for its 3s grace period, then it
	// is stopped with the 2s minimum; it exits at once on SIGTERM.
	if took < 2500*time.Millisecond {
		t.Errorf("the pods stopped after %s: the hanging preStop hook did not run", took)
	}
	notAfter(t, "stopping a pod whose preStop hangs (grace 3s + 2s minimum)", took, 3*time.Second+2*time.Second+2*time.Second)
	b, err := os.ReadFile(filepath.Join(out, "log"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(b)); strings.Join(got, " ") != "poststart prestop term" {
		t.Fatalf("hook log = %q, want postStart, then preStop, then SIGTERM", got)
	}
}

func TestAgentRestartKeepsAReadyContainerReadyAndRunning(t *testing.T) {
	h := newAgentHarness(t)
	// A long period: without adoption, a restarted agent would report the
	// container unready until its first probe, up to 10s later.
	h.writeManifest("steady.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: steady}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: %s
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
    readinessProbe: {exec: {command: ["true"]}, periodSeconds: 10}
    livenessProbe: {exec: {command: ["true"]}, periodSeconds: 10}
`, h.env.Image))
	h.start()
	pod := h.waitPod("steady", settle, "ready", func(p *corev1.Pod) bool {
		cond, c := ready(p, "main")
		return cond == corev1.ConditionTrue && c
	})
	id := statusOf(pod, "main").ContainerID
	// The prober adopts containers that ran for 10s before it started.
	started := statusOf(pod, "main").State.Running.StartedAt.Time
	time.Sleep(time.Until(started.Add(12 * time.Second)))
	h.stop()
	h.start()
	seen := 0
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		p := h.findPod("steady")
		if p != nil && len(p.Status.Conditions) > 0 {
			seen++
			st := statusOf(p, "main")
			cond, c := ready(p, "main")
			if st == nil || st.ContainerID != id || st.RestartCount != 0 || cond != corev1.ConditionTrue || !c || st.Started == nil || !*st.Started {
				t.Fatalf("after the restart the pod is %s; want container %s still ready and started", describe(p), id)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if seen == 0 {
		t.Fatal("the restarted agent never reported the pod")
	}
}
