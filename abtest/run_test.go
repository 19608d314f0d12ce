package abtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/agent/startgatetest"
	"github.com/nodekit/nodekit/managers/eviction"
	"github.com/nodekit/nodekit/pleg"
)

// A short A/B run on the simulated runtime: both PLEGs see the exits; the
// evented one wakes workers sooner, reads the runtime less and misses
// nothing.
func TestRunComparesThePLEGsOnTheSimulatedRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two agents for a few seconds each")
	}
	w := DefaultWorkload()
	w.Pods, w.Duration, w.ExitAfter, w.ExitSpread, w.BackOff = 5, 4*time.Second, time.Second, 500*time.Millisecond, 200*time.Millisecond
	w.RootDir = t.TempDir()
	rep, err := New().Run(context.Background(), w, []string{"pleg=generic", "pleg=evented"})
	if err != nil {
		t.Fatal(err)
	}
	generic, evented := rep.Results[0], rep.Results[1]
	if generic.Kind != pleg.KindGeneric || evented.Kind != pleg.KindEvented {
		t.Fatalf("the runs built PLEGs %q and %q, want generic and evented", generic.Kind, evented.Kind)
	}
	for _, r := range rep.Results {
		if len(r.Stages.Wake) < w.Pods {
			t.Errorf("%s: %d exits measured, want at least one per pod", r.Kind, len(r.Stages.Wake))
		}
	}
	if g, e := Percentile(generic.Stages.Wake, 0.5), Percentile(evented.Stages.Wake, 0.99); e >= g {
		t.Errorf("evented p99 %v is not below generic p50 %v", e, g)
	}
	if evented.PLEGCalls >= generic.PLEGCalls {
		t.Errorf("evented PLEG CRI calls/min %.0f, not below generic %.0f", evented.PLEGCalls, generic.PLEGCalls)
	}
	if evented.Missed != 0 || evented.Events == 0 {
		t.Errorf("evented: %.0f missed, %.0f events received; want 0 missed and some events", evented.Missed, evented.Events)
	}
	table := rep.String()
	for _, want := range []string{"| pleg=generic |", "| pleg=evented |", "n/a", "pleg=evented:", "every pod ran", "Ratios, pleg=evented / pleg=generic"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestPercentile(t *testing.T) {
	samples := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	tests := []struct {
		name string
		q    float64
		want time.Duration
	}{
		{"the median of ten is the fifth", 0.5, 5},
		{"p99 of ten is the largest", 0.99, 10},
		{"p100 is the largest", 1, 10},
		{"p0 is the smallest", 0, 1},
	}
	for _, tt := range tests {
		if got := Percentile(samples, tt.q); got != tt.want {
			t.Errorf("%s: Percentile(%v) = %v, want %v", tt.name, tt.q, got, tt.want)
		}
	}
	if got := Percentile(nil, 0.5); got != 0 {
		t.Errorf("percentile of no samples = %v, want 0", got)
	}
}

func TestWorkloadValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Workload)
		wantErr string
	}{
		{"the defaults are valid", func(*Workload) {}, ""},
		{"cri needs an endpoint", func(w *Workload) { w.Runtime = "cri" }, "--runtime-endpoint"},
		{"an unknown runtime is rejected", func(w *Workload) { w.Runtime = "docker" }, `runtime "docker"`},
		{"no pods is rejected", func(w *Workload) { w.Pods = 0 }, "pods 0"},
		{"a zero duration is rejected", func(w *Workload) { w.Duration = 0 }, "durations must be positive"},
	}
	for _, tt := range tests {
		w := DefaultWorkload()
		tt.mutate(&w)
		err := w.Validate()
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestParseBuiltins(t *testing.T) {
	h := New()
	v, err := h.Parse("pleg=evented,start=priority,admission=deny")
	if err != nil || v.Values["pleg"] != "evented" || v.Values["start"] != "priority" || v.Values["admission"] != "deny" || len(v.swaps) != 3 {
		t.Fatalf("Parse = %+v, %v", v, err)
	}
	if v, err := h.Parse("start=fifo"); err != nil || len(v.Values) != 1 {
		t.Fatalf("Parse(start=fifo) = %+v, %v; want only start, the other keys left to the agent's defaults", v, err)
	}
	for _, bad := range []string{"pleg=fast", "colour=red", "start", "", "pleg=generic,pleg=evented"} {
		if _, err := h.Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted it", bad)
		}
	}
}

func TestCountPods(t *testing.T) {
	pod := func(phase corev1.PodPhase, reason, message string) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: phase, Reason: reason, Message: message}}
	}
	got := countPods([]*corev1.Pod{
		pod(corev1.PodRunning, "", ""),
		pod(corev1.PodFailed, "Denied", "Pod was rejected: the pod is labelled ab-deny"),
		pod(corev1.PodFailed, eviction.Reason, "The node was low on resource: memory."),
		pod(corev1.PodFailed, eviction.Reason, "The node was low on resource: ephemeral-storage."),
		pod(corev1.PodFailed, "", "the container exited"),
		pod(corev1.PodPending, eviction.Reason, ""), // not yet terminal: not counted
	})
	if got != (podCounts{refused: 1, evicted: 2}) {
		t.Fatalf("countPods = %+v, want 1 refused and 2 evicted", got)
	}
}

// start=priority with a queue of sandbox creations starts every
// high-priority pod before the median pod; admission=deny refuses the
// labelled pods, which the default admission lets run.
func TestRunMeasuresStartOrderAndRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two agents for a few seconds each")
	}
	w := DefaultWorkload()
	w.Pods, w.Duration, w.SandboxLatency, w.MaxStarting, w.HighEvery, w.DenyEvery = 12, time.Second, 100*time.Millisecond, 2, 4, 6
	w.RootDir = t.TempDir()
	rep, err := New().Run(context.Background(), w, []string{"start=fifo", "start=priority,admission=deny"})
	if err != nil {
		t.Fatal(err)
	}
	fifo, prio := rep.Results[0], rep.Results[1]
	if fifo.Refused != 0 || prio.Refused != 2 || len(prio.Starts) != 10 {
		t.Fatalf("refused %d and %d (%d started), want 0 and 2 (10 started)", fifo.Refused, prio.Refused, len(prio.Starts))
	}
	if len(prio.HighStarts) != 3 || Percentile(prio.HighStarts, 1) >= Percentile(prio.Starts, 0.5) {
		t.Fatalf("start=priority: high-priority starts %v, all starts %v; want the 3 high ones before the median", prio.HighStarts, prio.Starts)
	}
	if table := rep.String(); !strings.Contains(table, "Ratios, start=priority,admission=deny / start=fifo") || !strings.Contains(table, "| pods refused | n/a (0 to 2) |") {
		t.Fatalf("no ratio table:\n%s", table)
	}
}

// The start=priority gate keeps the StartGate contract, with and without
// a limit (1: one pod every other round).
func TestPriorityGatePassesTheStartGateSuite(t *testing.T) {
	for _, limit := range []int{0, 1, 2, 4} {
		t.Run(fmt.Sprintf("max-starting=%d", limit), func(t *testing.T) {
			startgatetest.Suite(t, func() agent.StartGate { return priorityGate{maxStarting: limit} })
		})
	}
}
