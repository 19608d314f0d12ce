//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/pleg"
)

// TestEventedPLEGFallsBackWhileContainerdRestartsAndReturns cuts the event
// stream by restarting the private containerd (its shims keep the
// containers running): the evented PLEG falls back to relisting, returns to
// events once the stream is back, and no pod is restarted by the switch;
// afterwards a container killed from outside is still restarted.
//
// The outage lasts a few seconds; other tests using the same containerd at
// that moment may see errors.
func TestEventedPLEGFallsBackWhileContainerdRestartsAndReturns(t *testing.T) {
	h := newAgentHarness(t)
	e := h.startEvented(pleg.EventedConfig{FallbackAfter: 2, ReconnectBackoff: 100 * time.Millisecond, MaxReconnectBackoff: 500 * time.Millisecond})
	h.writeManifest("steady.yaml", sleeperPod(h.env.Image, "steady"))
	before := h.waitPod("steady", time.Minute, "the container to run", runningMain)

	modes := watchModes(e)
	restartContainerd(t, h)
	h.waitPod("steady", time.Minute, "the agent to see the pod again", runningMain)
	deadline := time.Now().Add(time.Minute)
	for e.Mode() != pleg.ModeEvents || e.Reconnects() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the PLEG did not return to events: mode %s, %d reconnects", e.Mode(), e.Reconnects())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if seen := modes(); !strings.Contains(seen, string(pleg.ModeRelisting)) {
		t.Errorf("modes seen: %s; want a fall back to relisting while the stream was cut", seen)
	}
	after := h.waitPod("steady", time.Minute, "the container to run", runningMain)
	b, a := before.Status.ContainerStatuses[0], after.Status.ContainerStatuses[0]
	if a.ContainerID != b.ContainerID || a.RestartCount != b.RestartCount {
		t.Errorf("the switch restarted the pod: container %s (restarts %d), was %s (restarts %d)", a.ContainerID, a.RestartCount, b.ContainerID, b.RestartCount)
	}
	if e.MissedEvents() != 0 {
		t.Errorf("MissedEvents() = %d, want 0: changes during the outage are not the stream's fault", e.MissedEvents())
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := strings.TrimPrefix(a.ContainerID, "containerd://")
	if err := h.env.runtime(t).StopContainer(ctx, id, 0); err != nil {
		t.Fatalf("stop container %s: %v", id, err)
	}
	h.waitPod("steady", time.Minute, "the killed container to be restarted", func(p *corev1.Pod) bool {
		return runningMain(p) && p.Status.ContainerStatuses[0].RestartCount == a.RestartCount+1
	})
}

// watchModes records the PLEG's modes, polled every 5ms, until the test
// ends; the returned function lists those seen.
func watchModes(e *pleg.Evented) func() string {
	var (
		mu   sync.Mutex
		seen []string
	)
	stop := make(chan struct{})
	go func() {
		for {
			m := string(e.Mode())
			mu.Lock()
			if len(seen) == 0 || seen[len(seen)-1] != m {
				seen = append(seen, m)
			}
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() string {
		close(stop)
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(seen, " -> ")
	}
}

// restartContainerd stops the private containerd (SIGTERM; its shims and
// containers live on) and starts it again exactly as hack/containerd-up.sh
// does: same binary, arguments and environment, its own session, output to
// its log, its pid in the pid file. It returns once CRI answers again.
func restartContainerd(t *testing.T, h *agentHarness) {
	t.Helper()
	dir := os.Getenv("NODEKIT_TEST_DIR")
	if dir == "" {
		dir = "/var/lib/nodekit-test"
	}
	pidFile := filepath.Join(dir, "containerd.pid")
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Skipf("no private containerd pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("pid file %s: %v", pidFile, err)
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		t.Skipf("containerd (pid %d) is not ours to restart: %v", pid, err)
	}
	args := procList(t, fmt.Sprintf("/proc/%d/cmdline", pid))
	env := procList(t, fmt.Sprintf("/proc/%d/environ", pid))
	logFile, err := os.OpenFile(filepath.Join(dir, "containerd.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()

	start := time.Now()
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("stop containerd (pid %d): %v", pid, err)
	}
	for _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil; _, err = os.Stat(fmt.Sprintf("/proc/%d", pid)) {
		if time.Since(start) > 20*time.Second {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd := exec.Command(exe, args[1:]...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, "/", logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start containerd again: %v", err)
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		t.Errorf("write %s: %v", pidFile, err)
	}
	go func() { _ = cmd.Wait() }() // reap it should it exit while the test runs
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := h.env.runtime(t).Version(ctx, "v1")
		cancel()
		if err == nil {
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("containerd does not answer a minute after its restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("containerd restarted (pid %d -> %d); CRI answered again after %v", pid, cmd.Process.Pid, time.Since(start))
}

// procList reads a NUL-separated /proc file.
func procList(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}
