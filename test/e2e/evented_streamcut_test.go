//go:build e2e

package e2e

import (
	"context"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/pleg"
)

// TestEventedPLEGFallsBackWhileContainerdRestartsAndReturns cuts the event
// stream by restarting containerd (its shims keep the
// containers running): the evented PLEG falls back to relisting, returns to
// events once the stream is back, and no pod is restarted by the switch;
// afterwards a container killed from outside is still restarted.
//
// It runs on the disruptable containerd (loadFaultLab), never the shared
// lab's: the outage lasts a few seconds.
func TestEventedPLEGFallsBackWhileContainerdRestartsAndReturns(t *testing.T) {
	lab := loadFaultLab(t)
	h := newAgentHarnessOn(t, lab.testEnv)
	e := h.startEvented(pleg.EventedConfig{FallbackAfter: 2, ReconnectBackoff: 100 * time.Millisecond, MaxReconnectBackoff: 500 * time.Millisecond})
	h.writeManifest("steady.yaml", sleeperPod(h.env.Image, "steady"))
	before := h.waitPod("steady", time.Minute, "the container to run", runningMain)

	modes := watchModes(e)
	lab.kill(t, syscall.SIGTERM)() // SIGTERM, then start it again
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

// procList reads a NUL-separated /proc file.
func procList(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}
