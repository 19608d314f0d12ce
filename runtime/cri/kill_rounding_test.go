package cri

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestKillPodRoundsTheRemainingGraceAsTheKubelet checks the stop timeout
// against the kubelet's killContainer arithmetic: the grace period in
// seconds, less the preStop hook's time in whole seconds rounded down, less
// a sidecar's wait in whole seconds rounded down, raised to the 2 s
// minimum; no hook runs with a grace period of 0.
func TestKillPodRoundsTheRemainingGraceAsTheKubelet(t *testing.T) {
	cases := []struct {
		name     string
		grace    int64
		hook     time.Duration // how long the preStop hook takes; 0: none
		wantHook bool
		want     int64
	}{
		{name: "no hook leaves the whole grace period", grace: 10, want: 10},
		{name: "a 2.3s hook takes 2s of 10s", grace: 10, hook: 2300 * time.Millisecond, wantHook: true, want: 8},
		{name: "a 1.999s hook takes 1s of 10s", grace: 10, hook: 1999 * time.Millisecond, wantHook: true, want: 9},
		{name: "a 3s hook takes 3s of 10s", grace: 10, hook: 3 * time.Second, wantHook: true, want: 7},
		{name: "a 7.5s hook leaves 3s of 10s", grace: 10, hook: 7500 * time.Millisecond, wantHook: true, want: 3},
		{name: "a 9.5s hook leaves 1s, raised to the minimum", grace: 10, hook: 9500 * time.Millisecond, wantHook: true, want: 2},
		{name: "a hook runs with a 1s grace period, then the minimum", grace: 1, hook: 500 * time.Millisecond, wantHook: true, want: 2},
		{name: "no hook runs with a grace period of 0", grace: 0, hook: time.Second, wantHook: false, want: 2},
		{name: "no hook runs with a negative grace period", grace: -1, hook: time.Second, wantHook: false, want: 2},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			pod := newPod("u1", "a")
			if tt.hook > 0 {
				pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
					Exec: &corev1.ExecAction{Command: []string{"true"}}}}
			}
			if err := e.sync(t, pod).Error(); err != nil {
				t.Fatal(err)
			}
			runner := &stepRunner{e: e, d: tt.hook}
			e.m.SetPreStopRunner(runner)
			if err := e.m.KillPod(context.Background(), pod, e.status(t, pod).ToPod(), ptr(tt.grace)); err != nil {
				t.Fatalf("KillPod: %v", err)
			}
			if ran := len(runner.calls) > 0; ran != tt.wantHook {
				t.Errorf("preStop ran: %v, want %v", ran, tt.wantHook)
			}
			if _, timeouts := e.rs.stops(); timeouts["a"] != tt.want {
				t.Errorf("a stopped with %ds, want %ds", timeouts["a"], tt.want)
			}
		})
	}
}

// TestKillPodRoundsASidecarsWaitDown: a sidecar that waited 1.5 s for the
// regular container keeps 9 s of 10 (the kubelet truncates the wait), not 8.
func TestKillPodRoundsASidecarsWaitDown(t *testing.T) {
	e := newTestEnv(t)
	pod := runningSidecarPod(t, e, "a")
	e.rs.onStop = func(name string) {
		if name == "a" {
			e.clk.Step(1500 * time.Millisecond)
		}
	}
	if err := e.m.KillPod(context.Background(), pod, e.status(t, pod).ToPod(), ptr(int64(10))); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	_, timeouts := e.rs.stops()
	for name, want := range map[string]int64{"a": 10, "s2-sc": 9, "s1-sc": 9} {
		if timeouts[name] != want {
			t.Errorf("%s stopped with %ds, want %ds", name, timeouts[name], want)
		}
	}
}
