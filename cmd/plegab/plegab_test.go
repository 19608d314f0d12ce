package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/nodekit/nodekit/pleg"
)

// A short A/B run on the simulated runtime: both PLEGs see the exits; the
// evented one wakes workers sooner, reads the runtime less and misses
// nothing.
func TestRunComparesThePLEGsOnTheSimulatedRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two agents for a few seconds each")
	}
	w := defaultWorkload()
	w.Pods, w.Duration, w.ExitAfter, w.ExitSpread, w.BackOff = 5, 4*time.Second, time.Second, 500*time.Millisecond, 200*time.Millisecond
	w.RootDir = t.TempDir()
	ctx := context.Background()
	generic, err := Run(ctx, w, Variant{Name: "pleg=generic", PLEG: pleg.KindGeneric, Start: "fifo", Admission: "default"}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	evented, err := Run(ctx, w, Variant{Name: "pleg=evented", PLEG: pleg.KindEvented, Start: "fifo", Admission: "default"}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Result{generic, evented} {
		if len(r.Stages.Wake) < w.Pods {
			t.Errorf("%s: %d exits measured, want at least one per pod", r.Kind, len(r.Stages.Wake))
		}
	}
	if g, e := percentile(generic.Stages.Wake, 0.5), percentile(evented.Stages.Wake, 0.99); e >= g {
		t.Errorf("evented p99 %v is not below generic p50 %v", e, g)
	}
	if evented.PLEGCalls >= generic.PLEGCalls {
		t.Errorf("evented PLEG CRI calls/min %.0f, not below generic %.0f", evented.PLEGCalls, generic.PLEGCalls)
	}
	if evented.Missed != 0 || evented.Events == 0 {
		t.Errorf("evented: %.0f missed, %.0f events received; want 0 missed and some events", evented.Missed, evented.Events)
	}
	table := Table(w, []Result{generic, evented})
	for _, want := range []string{"| pleg=generic |", "| pleg=evented |", "n/a", "pleg=evented:", "Ratios, pleg=evented / pleg=generic"} {
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
		if got := percentile(samples, tt.q); got != tt.want {
			t.Errorf("%s: percentile(%v) = %v, want %v", tt.name, tt.q, got, tt.want)
		}
	}
	if got := percentile(nil, 0.5); got != 0 {
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
		w := defaultWorkload()
		tt.mutate(&w)
		err := w.Validate()
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestParseVariant(t *testing.T) {
	v, err := ParseVariant("pleg=evented,start=priority,admission=deny")
	if err != nil || v.PLEG != pleg.KindEvented || v.Start != "priority" || v.Admission != "deny" {
		t.Fatalf("ParseVariant = %+v, %v", v, err)
	}
	if v, err := ParseVariant("start=fifo"); err != nil || v.PLEG != pleg.KindGeneric || v.Admission != "default" {
		t.Fatalf("ParseVariant(start=fifo) = %+v, %v; want the other defaults", v, err)
	}
	for _, bad := range []string{"pleg=fast", "colour=red", "start", ""} {
		if _, err := ParseVariant(bad); err == nil {
			t.Errorf("ParseVariant(%q) accepted it", bad)
		}
	}
}

// start=priority with a queue of sandbox creations starts every
// high-priority pod before the median pod; admission=deny refuses the
// labelled pods, which the default admission lets run.
func TestRunMeasuresStartOrderAndRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two agents for a few seconds each")
	}
	w := defaultWorkload()
	w.Pods, w.Duration, w.SandboxLatency, w.MaxStarting, w.HighEvery, w.DenyEvery = 12, time.Second, 100*time.Millisecond, 2, 4, 6
	w.RootDir = t.TempDir()
	ctx := context.Background()
	var results []Result
	for _, spec := range []string{"start=fifo", "start=priority,admission=deny"} {
		v, err := ParseVariant(spec)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(ctx, w, v, logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	fifo, prio := results[0], results[1]
	if fifo.Refused != 0 || prio.Refused != 2 || len(prio.Starts) != 10 {
		t.Fatalf("refused %d and %d (%d started), want 0 and 2 (10 started)", fifo.Refused, prio.Refused, len(prio.Starts))
	}
	if len(prio.HighStarts) != 3 || percentile(prio.HighStarts, 1) >= percentile(prio.Starts, 0.5) {
		t.Fatalf("start=priority: high-priority starts %v, all starts %v; want the 3 high ones before the median", prio.HighStarts, prio.Starts)
	}
	if table := Table(w, results); !strings.Contains(table, "Ratios, start=priority,admission=deny / start=fifo") {
		t.Fatalf("no ratio table:\n%s", table)
	}
}
