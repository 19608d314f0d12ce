package prober

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

type hookEvent struct {
	key   probeKey
	event string
}

// run starts e.p.Run with the test hook on; stop cancels it and returns
// Run's error.
func (e *env) run(t *testing.T) (events <-chan hookEvent, stop func() error) {
	t.Helper()
	ch := make(chan hookEvent, 1000)
	e.p.hook = func(k probeKey, ev string) { ch <- hookEvent{k, ev} }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.p.Run(ctx) }()
	var stopped bool
	var err error
	stop = func() error {
		if !stopped {
			cancel()
			err, stopped = <-done, true
		}
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return ch, stop
}

// wait returns the next hook event, failing the test after a minute.
func wait(t *testing.T, events <-chan hookEvent) hookEvent {
	t.Helper()
	select {
	case ev := <-events:
		return ev
	case <-time.After(time.Minute):
		t.Fatal("no worker event within a minute")
		return hookEvent{}
	}
}

func TestRunProbesEveryPeriodAndReportsALivenessFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	pod := newPod(corev1.Container{Name: "app", LivenessProbe: execProbe(func(p *corev1.Probe) { p.FailureThreshold = 1 })})
	e.p.AddPod(pod)
	e.p.UpdatePodStatus(pod, podStatus(running("app", ctrID, epoch)))
	events, stop := e.run(t)

	if ev := wait(t, events); ev.event != "idle" || e.exec.count() != 0 {
		t.Fatalf("first event %v after %d probes, want idle (jitter) before any probe", ev, e.exec.count())
	}
	for i := 1; i <= 2; i++ {
		e.clk.Step(10 * time.Second)
		wait(t, events)
		if n := e.exec.count(); n != i {
			t.Fatalf("%d probes after %d periods, want %d", n, i, i)
		}
	}
	e.exec.queue(execResult{code: 1, out: "boom"})
	e.clk.Step(10 * time.Second)
	wait(t, events)
	e.clk.Step(10 * time.Second)
	wait(t, events)
	if n := e.exec.count(); n != 3 {
		t.Errorf("%d probes, want 3: a failed liveness probe holds the worker", n)
	}

	var got []Update
	for len(e.p.Liveness().Updates()) > 0 {
		got = append(got, <-e.p.Liveness().Updates())
	}
	want := []Update{
		{ContainerID: ctrID, Result: Success, PodUID: podUID, Probe: Liveness},
		{ContainerID: ctrID, Result: Failure, PodUID: podUID, Probe: Liveness},
	}
	if !slices.Equal(got, want) {
		t.Errorf("updates %+v, want %+v", got, want)
	}
	wantEvents := []string{"Warning Unhealthy spec.containers{app} Liveness probe failed: boom"}
	if got := e.rec.list(); !slices.Equal(got, wantEvents) {
		t.Errorf("events %q, want %q", got, wantEvents)
	}
	total := e.p.metrics.total
	for result, want := range map[string]float64{resultSuccessful: 2, resultFailed: 1, resultUnknown: 0} {
		if got := testutil.ToFloat64(total.WithLabelValues("Liveness", result, "app", "web", "ns", string(podUID))); got != want {
			t.Errorf("prober_probe_total{result=%q} = %v, want %v", result, got, want)
		}
	}
	if n := testutil.CollectAndCount(e.p.metrics.duration, "prober_probe_duration_seconds"); n != 1 {
		t.Errorf("%d duration series, want 1", n)
	}

	if err := stop(); err != nil {
		t.Fatalf("Run() = %v, want nil", err)
	}
	if _, ok := e.p.Liveness().Get(ctrID); ok {
		t.Error("the result outlived its worker")
	}
	if n := testutil.CollectAndCount(e.p.metrics.total); n != 0 {
		t.Errorf("%d prober_probe_total series after the worker stopped, want 0", n)
	}
	if len(e.p.workers) != 0 {
		t.Errorf("%d workers left after Run returned", len(e.p.workers))
	}
}

func TestMetricsAreRegisteredWithTheKubeletNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	pod := newPod(corev1.Container{Name: "app", ReadinessProbe: execProbe()})
	e.p.AddPod(pod)
	e.p.UpdatePodStatus(pod, podStatus(running("app", ctrID, epoch)))
	e.worker(t, "app", Readiness).doProbe(context.Background())
	n, err := testutil.GatherAndCount(e.reg, "prober_probe_total", "prober_probe_duration_seconds")
	if err != nil || n != 4 {
		t.Errorf("gathered %d series (%v), want 3 result series and 1 histogram", n, err)
	}
}

func TestUpdatePodStatusRunsAWaitingReadinessProbeAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	e.clk.Step(time.Hour) // an old Prober: no jitter
	pod := newPod(corev1.Container{Name: "app", ReadinessProbe: execProbe(func(p *corev1.Probe) { p.SuccessThreshold = 2 })})
	e.p.AddPod(pod)
	e.p.UpdatePodStatus(pod, podStatus(running("app", ctrID, epoch)))
	<-e.worker(t, "app", Readiness).triggerCh // asked before Run: start afresh
	events, _ := e.run(t)
	wait(t, events)
	if n := e.exec.count(); n != 1 {
		t.Fatalf("%d probes without jitter, want 1 at once", n)
	}
	e.p.UpdatePodStatus(pod, podStatus(running("app", ctrID, epoch)))
	wait(t, events)
	if n := e.exec.count(); n != 2 {
		t.Fatalf("%d probes after UpdatePodStatus, want 2 without a tick", n)
	}
	if r, _ := e.p.Readiness().Get(ctrID); r != Success {
		t.Errorf("readiness %v after two successes, want Success", r)
	}
}

func TestRemovePodAndCleanupPodsStopWorkers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	e.clk.Step(time.Hour)
	events, _ := e.run(t)
	a := newPod(corev1.Container{Name: "app", LivenessProbe: execProbe(), ReadinessProbe: execProbe()})
	b := newPod(corev1.Container{Name: "app", LivenessProbe: execProbe()})
	b.UID, b.Name = "uid-2", "other"
	c := newPod(corev1.Container{Name: "app", LivenessProbe: execProbe()})
	c.UID, c.Name = "uid-3", "third"
	for _, pod := range []*corev1.Pod{a, b, c} {
		e.p.AddPod(pod)
		e.p.UpdatePodStatus(pod, podStatus(running("app", "containerd://"+string(pod.UID), epoch)))
	}
	for range 4 {
		wait(t, events) // each worker probed once and waits
	}

	e.p.RemovePod(a)
	exited := map[probeKey]bool{}
	for len(exited) < 2 {
		if ev := wait(t, events); ev.event == "exit" {
			exited[ev.key] = true
		}
	}
	for k := range exited {
		if k.podUID != a.UID {
			t.Errorf("RemovePod(a) stopped %v", k)
		}
	}
	if _, ok := e.p.Liveness().Get("containerd://" + string(a.UID)); ok {
		t.Error("RemovePod kept a's liveness result")
	}

	e.p.CleanupPods(map[types.UID]bool{b.UID: true})
	if ev := wait(t, events); ev.event != "exit" || ev.key.podUID != c.UID {
		t.Errorf("CleanupPods: event %+v, want the exit of c's worker", ev)
	}
	if !e.p.hasWorker(b.UID, "app", Liveness) {
		t.Error("CleanupPods stopped a desired pod's worker")
	}
}

func TestStopLivenessAndStartupKeepsReadiness(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	events, _ := e.run(t)
	pod := newPod(corev1.Container{Name: "app", LivenessProbe: execProbe(), StartupProbe: execProbe(), ReadinessProbe: execProbe()})
	e.p.AddPod(pod)
	for range 3 {
		wait(t, events) // jitter waits
	}
	e.p.StopLivenessAndStartup(pod)
	for range 2 {
		if ev := wait(t, events); ev.event != "exit" || ev.key.probe == Readiness {
			t.Errorf("event %+v, want the exit of the liveness or startup worker", ev)
		}
	}
	if !e.p.hasWorker(podUID, "app", Readiness) {
		t.Error("the readiness worker stopped")
	}
}

func TestRunTwiceFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	events, stop := e.run(t)
	e.p.AddPod(newPod(corev1.Container{Name: "app", LivenessProbe: execProbe()}))
	wait(t, events) // the first Run runs the worker
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.p.Run(ctx); !errors.Is(err, ErrAlreadyRunning) {
		t.Errorf("second Run() = %v, want ErrAlreadyRunning", err)
	}
	if err := stop(); err != nil {
		t.Errorf("first Run() = %v, want nil", err)
	}
}

func TestRunStopsAWorkerBlockedOnAFullUpdateChannel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{UpdateBuffer: 1})
	e.clk.Step(time.Hour)
	pod := newPod(corev1.Container{Name: "app", ReadinessProbe: execProbe()})
	e.p.AddPod(pod)
	e.p.UpdatePodStatus(pod, podStatus(running("app", ctrID, epoch)))
	_, stop := e.run(t)
	// Failure (initial) fills the buffer; Success waits for a reader that
	// never comes. Stopping must not hang (goleak checks the goroutine).
	for len(e.p.Readiness().Updates()) == 0 {
		runtimeGosched()
	}
	if err := stop(); err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
}

func TestJitter(t *testing.T) {
	t.Parallel()
	seq := func(seed int64) []time.Duration {
		e := newEnv(t, Config{Seed: seed})
		var out []time.Duration
		for range 5 {
			out = append(out, e.p.jitter(10*time.Second))
		}
		return out
	}
	a, b, c := seq(1), seq(1), seq(2)
	if !slices.Equal(a, b) {
		t.Errorf("seed 1 gave %v then %v, want the same", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 1 and 2 both gave %v", a)
	}
	for _, d := range a {
		if d < 0 || d >= 10*time.Second {
			t.Errorf("jitter %v outside [0, 10s)", d)
		}
	}
	e := newEnv(t, Config{Seed: 1})
	e.clk.Step(10 * time.Second)
	if d := e.p.jitter(10 * time.Second); d != 0 {
		t.Errorf("jitter %v one period after the start, want 0", d)
	}
}
