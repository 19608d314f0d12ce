package prober

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// step is one probe run of a scripted worker test.
type step struct {
	at     time.Duration // clock offset from epoch
	probe  ProbeType     // whose worker runs when the case's probe is -1
	ctr    string        // container ID; ctrID by default. A new ID starts at `at`.
	exited bool          // the container has exited (code 1)
	exec   []execResult  // answers of the exec calls of this run
	calls  int           // exec calls the run makes
	want   string        // cached result afterwards, "-" for none
}

func TestWorkerThresholds(t *testing.T) {
	t.Parallel()
	fail, ok := execResult{code: 1, out: "boom"}, execResult{}
	withFailure := func(n int32) func(*corev1.Probe) { return func(p *corev1.Probe) { p.FailureThreshold = n } }
	withSuccess := func(n int32) func(*corev1.Probe) { return func(p *corev1.Probe) { p.SuccessThreshold = n } }
	cases := []struct {
		name  string
		ctr   corev1.Container
		probe ProbeType
		steps []step
	}{{
		name:  "liveness starts at Success and waits initialDelaySeconds from the container start",
		ctr:   corev1.Container{Name: "app", LivenessProbe: execProbe(func(p *corev1.Probe) { p.InitialDelaySeconds = 15 })},
		probe: Liveness,
		steps: []step{{at: 0, want: "Success"}, {at: 14 * time.Second, want: "Success"}, {at: 15 * time.Second, exec: []execResult{fail}, calls: 1, want: "Success"}},
	}, {
		name:  "liveness fails only after failureThreshold failures in a row",
		ctr:   corev1.Container{Name: "app", LivenessProbe: execProbe()},
		probe: Liveness,
		steps: []step{
			{at: 0, exec: []execResult{fail}, calls: 1, want: "Success"},
			{at: 10 * time.Second, exec: []execResult{fail}, calls: 1, want: "Success"},
			{at: 20 * time.Second, exec: []execResult{fail}, calls: 1, want: "Failure"},
		},
	}, {
		name:  "a success in between starts the failure count over",
		ctr:   corev1.Container{Name: "app", LivenessProbe: execProbe()},
		probe: Liveness,
		steps: []step{
			{exec: []execResult{fail}, calls: 1, want: "Success"}, {exec: []execResult{fail}, calls: 1, want: "Success"},
			{exec: []execResult{ok}, calls: 1, want: "Success"},
			{exec: []execResult{fail}, calls: 1, want: "Success"}, {exec: []execResult{fail}, calls: 1, want: "Success"},
			{exec: []execResult{fail}, calls: 1, want: "Failure"},
		},
	}, {
		name:  "a failed liveness probe holds the worker until the container is replaced",
		ctr:   corev1.Container{Name: "app", LivenessProbe: execProbe(withFailure(1))},
		probe: Liveness,
		steps: []step{
			{at: 0, exec: []execResult{fail}, calls: 1, want: "Failure"},
			{at: 10 * time.Second, calls: 0, want: "Failure"},
			{at: 20 * time.Second, ctr: ctrID2, exec: []execResult{ok}, calls: 1, want: "Success"},
		},
	}, {
		name:  "a new container ID resets the counters and the result",
		ctr:   corev1.Container{Name: "app", LivenessProbe: execProbe()},
		probe: Liveness,
		steps: []step{
			{exec: []execResult{fail}, calls: 1, want: "Success"}, {exec: []execResult{fail}, calls: 1, want: "Success"},
			{ctr: ctrID2, exec: []execResult{fail}, calls: 1, want: "Success"},
			{ctr: ctrID2, exec: []execResult{fail}, calls: 1, want: "Success"},
			{ctr: ctrID2, exec: []execResult{fail}, calls: 1, want: "Failure"},
		},
	}, {
		name:  "readiness starts at Failure and needs successThreshold successes in a row",
		ctr:   corev1.Container{Name: "app", ReadinessProbe: execProbe(withSuccess(2))},
		probe: Readiness,
		steps: []step{
			{exec: []execResult{ok}, calls: 1, want: "Failure"},
			{exec: []execResult{ok}, calls: 1, want: "Success"},
			{exec: []execResult{fail}, calls: 1, want: "Success"},
		},
	}, {
		name:  "readiness keeps probing after it fails",
		ctr:   corev1.Container{Name: "app", ReadinessProbe: execProbe(withFailure(1))},
		probe: Readiness,
		steps: []step{{exec: []execResult{fail}, calls: 1, want: "Failure"}, {exec: []execResult{ok}, calls: 1, want: "Success"}},
	}, {
		name:  "startup stays Unknown until it passes, then stops probing",
		ctr:   corev1.Container{Name: "app", StartupProbe: execProbe()},
		probe: Startup,
		steps: []step{{exec: []execResult{fail}, calls: 1, want: "Unknown"}, {exec: []execResult{ok}, calls: 1, want: "Success"}, {calls: 0, want: "Success"}},
	}, {
		name:  "startup failing failureThreshold times in a row holds the worker",
		ctr:   corev1.Container{Name: "app", StartupProbe: execProbe(withFailure(2))},
		probe: Startup,
		steps: []step{{exec: []execResult{fail}, calls: 1, want: "Unknown"}, {exec: []execResult{fail}, calls: 1, want: "Failure"}, {calls: 0, want: "Failure"}},
	}, {
		name:  "liveness and readiness wait for the startup probe to pass",
		ctr:   corev1.Container{Name: "app", StartupProbe: execProbe(), LivenessProbe: execProbe(), ReadinessProbe: execProbe()},
		probe: -1,
		steps: []step{
			{probe: Liveness, calls: 0, want: "Success"},
			{probe: Readiness, calls: 0, want: "Failure"},
			{probe: Startup, exec: []execResult{ok}, calls: 1, want: "Success"},
			{probe: Liveness, exec: []execResult{fail}, calls: 1, want: "Success"},
			{probe: Readiness, exec: []execResult{ok}, calls: 1, want: "Success"},
		},
	}, {
		name:  "an exited container is a Failure without probing",
		ctr:   corev1.Container{Name: "app", ReadinessProbe: execProbe()},
		probe: Readiness,
		steps: []step{{exec: []execResult{ok}, calls: 1, want: "Success"}, {exited: true, calls: 0, want: "Failure"}},
	}, {
		name:  "an errored probe is tried three times and then not counted",
		ctr:   corev1.Container{Name: "app", LivenessProbe: execProbe(withFailure(1))},
		probe: Liveness,
		steps: []step{{exec: []execResult{{err: errors.New("no such container")}, {err: errors.New("x")}, {err: errors.New("x")}}, calls: 3, want: "Success"}},
	}, {
		name:  "an errored probe that works on a retry counts",
		ctr:   corev1.Container{Name: "app", LivenessProbe: execProbe(withFailure(1))},
		probe: Liveness,
		steps: []step{{exec: []execResult{{err: errors.New("transient")}, fail}, calls: 2, want: "Failure"}},
	}, {
		name:  "an exec that times out fails",
		ctr:   corev1.Container{Name: "app", LivenessProbe: execProbe(withFailure(1))},
		probe: Liveness,
		steps: []step{{exec: []execResult{{err: ErrExecTimeout}}, calls: 1, want: "Failure"}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runScript(t, tc.ctr, tc.probe, tc.steps)
		})
	}
}

// runScript drives the workers of one container through steps, calling
// doProbe directly.
func runScript(t *testing.T, ctr corev1.Container, probe ProbeType, steps []step) {
	t.Helper()
	e := newEnv(t, Config{})
	pod := newPod(ctr)
	e.p.AddPod(pod)
	id, started := ctrID, epoch
	for i, s := range steps {
		if s.ctr == "" {
			s.ctr = ctrID
		}
		if s.ctr != id {
			id, started = s.ctr, epoch.Add(s.at)
		}
		if s.at != 0 {
			e.clk.SetTime(epoch.Add(s.at))
		}
		cs := running(ctr.Name, id, started)
		if s.exited {
			cs = terminated(ctr.Name, id, 1)
		}
		e.p.UpdatePodStatus(pod, podStatus(cs))
		pt := probe
		if pt < 0 {
			pt = s.probe
		}
		e.exec.queue(s.exec...)
		before := e.exec.count()
		if !e.worker(t, ctr.Name, pt).doProbe(context.Background()) {
			t.Fatalf("step %d: the worker gave up", i)
		}
		if got := e.exec.count() - before; got != s.calls {
			t.Errorf("step %d: %d exec calls, want %d", i, got, s.calls)
		}
		got := "-"
		if r, ok := e.p.resultsFor(pt).Get(id); ok {
			got = r.String()
		}
		if got != s.want {
			t.Errorf("step %d (%v): result %s, want %s", i, pt, got, s.want)
		}
	}
}
