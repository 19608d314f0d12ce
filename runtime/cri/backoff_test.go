package cri

import (
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// crash makes the newest instance of container a exit now with code 1.
func (e *testEnv) crash(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	e.rs.setContainer(t, e.containerIDOf(t, pod, "a"), runtimeapi.ContainerState_CONTAINER_EXITED, 1, e.clk.Now())
}

// expectBackOff syncs and expects a CrashLoopBackOff of delay with retry left.
func (e *testEnv) expectBackOff(t *testing.T, pod *corev1.Pod, delay, left time.Duration) {
	t.Helper()
	r := e.sync(t, pod)
	step, ok := failedSteps(r)["StartContainer/a"]
	wantMsg := fmt.Sprintf("back-off %s restarting failed container=a pod=web-u1_default(u1)", delay)
	if !ok || !errors.Is(step.Err, noderuntime.ErrCrashLoopBackOff) || step.Message != wantMsg || step.RetryAfter != left {
		t.Fatalf("steps = %+v, want back-off %s with %s left", r.Steps, delay, left)
	}
	if !r.OnlyBackOff() {
		t.Error("OnlyBackOff = false")
	}
}

// expectStart syncs and expects container a to start with restartCount.
func (e *testEnv) expectStart(t *testing.T, pod *corev1.Pod, restartCount int) {
	t.Helper()
	r := e.sync(t, pod)
	if n := len(r.Steps); r.Error() != nil || n == 0 || r.Steps[n-1].Action != noderuntime.StartContainer {
		t.Fatalf("steps = %+v, want a successful start", r.Steps)
	}
	if got := e.status(t, pod).FindContainerStatusByName("a"); got.State != noderuntime.ContainerStateRunning || got.RestartCount != restartCount {
		t.Fatalf("container %+v, want running with restart count %d", got, restartCount)
	}
}

func TestSyncPodCrashLoopBackOffDoublesToTheCapAndResets(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "a")
	e.expectStart(t, pod, 0)
	// The first restart is immediate.
	e.crash(t, pod)
	e.expectStart(t, pod, 1)
	restarts := 1
	for _, d := range []time.Duration{10, 20, 40, 80, 160, 300, 300} {
		delay := d * time.Second
		e.crash(t, pod)
		e.expectBackOff(t, pod, delay, delay)
		e.clk.Step(delay - time.Second)
		e.expectBackOff(t, pod, delay, time.Second)
		e.clk.Step(time.Second)
		restarts++
		e.expectStart(t, pod, restarts)
	}
	// A container that ran longer than BackOffResetAfter restarts at once
	// and starts the backoff again from the initial delay.
	e.clk.Step(601 * time.Second)
	e.crash(t, pod)
	restarts++
	e.expectStart(t, pod, restarts)
	e.crash(t, pod)
	e.expectBackOff(t, pod, 10*time.Second, 10*time.Second)
}
