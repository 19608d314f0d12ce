package cri

import (
	"context"
	goruntime "runtime"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// runningSidecarPod returns a pod with sidecars s1-sc, s2-sc and the given
// regular containers, synced until everything runs in the fake runtime.
func runningSidecarPod(t *testing.T, e *testEnv, regular ...string) *corev1.Pod {
	t.Helper()
	pod := initPod(corev1.RestartPolicyAlways, []string{"s1-sc", "s2-sc"}, regular, nil)
	for range 4 {
		if err := e.sync(t, pod).Error(); err != nil {
			t.Fatalf("SyncPod: %v", err)
		}
	}
	if n := len(e.status(t, pod).GetRunningContainerStatuses()); n != 2+len(regular) {
		t.Fatalf("running containers = %d, want %d", n, 2+len(regular))
	}
	return pod
}

func TestKillPodStopsRegularContainersThenSidecarsInReverseOrder(t *testing.T) {
	e := newTestEnv(t)
	pod := runningSidecarPod(t, e, "a", "b")
	if err := e.m.KillPod(context.Background(), pod, e.status(t, pod).ToPod(), nil); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	order, timeouts := e.rs.stops()
	if len(order) != 4 || !slices.Contains(order[:2], "a") || !slices.Contains(order[:2], "b") || order[2] != "s2-sc" || order[3] != "s1-sc" {
		t.Fatalf("stop order = %v, want a and b, then s2-sc, then s1-sc", order)
	}
	for name, got := range timeouts {
		if got != 30 {
			t.Errorf("%s stopped with %ds, want the whole 30s (no time passed)", name, got)
		}
	}
}

func TestKillPodSidecarsGetTheRestOfTheBudget(t *testing.T) {
	e := newTestEnv(t)
	pod := runningSidecarPod(t, e, "a")
	e.rs.onStop = func(name string) {
		if name == "a" {
			e.clk.Step(5 * time.Second) // the regular container takes 5s to exit
		}
	}
	if err := e.m.KillPod(context.Background(), pod, e.status(t, pod).ToPod(), ptr(int64(20))); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	_, timeouts := e.rs.stops()
	want := map[string]int64{"a": 20, "s2-sc": 15, "s1-sc": 15}
	for name, w := range want {
		if timeouts[name] != w {
			t.Errorf("%s stopped with %ds, want %ds", name, timeouts[name], w)
		}
	}
}

func TestKillPodSidecarsStopWhenTheBudgetRunsOut(t *testing.T) {
	e := newTestEnv(t)
	pod := runningSidecarPod(t, e, "a")
	release := make(chan struct{})
	mainStopping := make(chan struct{})
	sidecarStopped := make(chan string, 2)
	e.rs.onStop = func(name string) {
		if name == "a" {
			close(mainStopping)
			<-release // the regular container does not exit
			return
		}
		sidecarStopped <- name
	}
	done := make(chan error)
	go func() { done <- e.m.KillPod(context.Background(), pod, e.status(t, pod).ToPod(), ptr(int64(10))) }()
	<-mainStopping
	waitFor(t, "both sidecars wait for their turn", func() bool { return e.clk.Waiters() >= 2 })
	e.clk.Step(11 * time.Second)
	for range 2 {
		select {
		case <-sidecarStopped:
		case <-time.After(10 * time.Second):
			t.Fatal("sidecars were not stopped when the budget ran out")
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	_, timeouts := e.rs.stops()
	if timeouts["s1-sc"] != 2 || timeouts["s2-sc"] != 2 {
		t.Fatalf("sidecar timeouts = %v, want the 2s minimum", timeouts)
	}
}

func TestKillPodOfAnOrphanStopsEverythingAtOnce(t *testing.T) {
	e := newTestEnv(t)
	pod := runningSidecarPod(t, e, "a")
	release := make(chan struct{})
	stopped := make(chan string, 3)
	e.rs.onStop = func(name string) {
		stopped <- name
		<-release
	}
	done := make(chan error)
	go func() { done <- e.m.KillPod(context.Background(), nil, e.status(t, pod).ToPod(), ptr(int64(10))) }()
	for range 3 { // all three stops are under way together
		select {
		case <-stopped:
		case <-time.After(10 * time.Second):
			t.Fatal("an orphan's containers were not stopped in parallel")
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("KillPod: %v", err)
	}
}

// stepRunner is a PreStopRunner that takes d of the fake clock.
type stepRunner struct {
	e     *testEnv
	d     time.Duration
	calls []string
}

func (r *stepRunner) RunPreStop(ctx context.Context, _ *corev1.Pod, c *corev1.Container, _ noderuntime.ContainerID) error {
	r.calls = append(r.calls, c.Name)
	if _, ok := ctx.Deadline(); !ok {
		return context.DeadlineExceeded
	}
	r.e.clk.Step(r.d)
	return nil
}

func TestKillPodCountsPreStopInsideTheBudget(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "a", "b")
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	runner := &stepRunner{e: e, d: 3 * time.Second}
	e.m.SetPreStopRunner(runner)
	if err := e.m.KillPod(context.Background(), pod, e.status(t, pod).ToPod(), ptr(int64(10))); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	_, timeouts := e.rs.stops()
	if !slices.Equal(runner.calls, []string{"a"}) || timeouts["a"] != 7 {
		t.Fatalf("preStop calls %v, a stopped with %ds; want [a] and 7s", runner.calls, timeouts["a"])
	}
}

func TestKillPodKeepsTheMinimumAfterALongPreStop(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "a")
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	e.m.SetPreStopRunner(&stepRunner{e: e, d: time.Minute})
	if err := e.m.KillPod(context.Background(), pod, e.status(t, pod).ToPod(), ptr(int64(10))); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	if _, timeouts := e.rs.stops(); timeouts["a"] != 2 {
		t.Fatalf("a stopped with %ds, want the 2s minimum", timeouts["a"])
	}
}

// waitFor yields to the goroutines under test until cond holds, and fails
// the test if it does not within 10s of real time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		goruntime.Gosched()
	}
}
