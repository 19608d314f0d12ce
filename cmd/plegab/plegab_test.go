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
	generic, err := Run(ctx, w, pleg.KindGeneric, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	evented, err := Run(ctx, w, pleg.KindEvented, logr.Discard())
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
	for _, want := range []string{"| generic |", "| evented |", "n/a", "evented PLEG:"} {
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
