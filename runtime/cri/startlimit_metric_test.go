package cri

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// startWaits gathers reg and returns the count and sum of the
// nodekit_runtime_start_slot_wait_seconds observations of op.
func startWaits(t *testing.T, reg prometheus.Gatherer, op string) (uint64, float64) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "nodekit_runtime_start_slot_wait_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation_type" && l.GetValue() == op {
					return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	return 0, 0
}

func sandboxConfig(name string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: name}}
}

func containerConfig(name string) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: name}}
}

// TestLimitStartsObservesEachWaitByOperation holds the one slot with a
// StartContainer that got it at once, queues a CreateContainer and, 2 s
// later, a RunPodSandbox, and releases the slot 7 s after the first queued:
// the create (a later stage) waited 7 s, the sandbox 6 s (it waits 1 s more,
// behind the create, and arrived 2 s late).
func TestLimitStartsObservesEachWaitByOperation(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	reg := prometheus.NewRegistry()
	b := newBlockingStarts()
	l := LimitStarts(b, 1, clk, reg, logr.Discard()).(*limitedStarts)
	done := make(chan error, 3)
	go func() { done <- l.StartContainer(context.Background(), "first") }()
	<-b.entered
	go func() {
		_, err := l.CreateContainer(context.Background(), "sb", containerConfig("c"), nil)
		done <- err
	}()
	waitQueued(t, l.slots, 1)
	clk.Step(2 * time.Second)
	go func() {
		_, err := l.RunPodSandbox(context.Background(), sandboxConfig("p"), "")
		done <- err
	}()
	waitQueued(t, l.slots, 2)
	clk.Step(5 * time.Second)
	b.proceed <- struct{}{} // the start ends: the create gets the slot
	if got := <-b.entered; got != "create c" {
		t.Fatalf("after the start ended %q reached the runtime, want the create", got)
	}
	clk.Step(time.Second)
	b.proceed <- struct{}{} // the create ends: the sandbox gets the slot
	<-b.entered
	b.proceed <- struct{}{}
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	for op, want := range map[string]float64{"start_container": 0, "create_container": 7, "run_podsandbox": 6} {
		if n, sum := startWaits(t, reg, op); n != 1 || sum != want {
			t.Errorf("%s: %d waits observed summing %v s, want 1 of %v s", op, n, sum, want)
		}
	}
}

func TestLimitStartsObservesAWaitEndedByItsContext(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	reg := prometheus.NewRegistry()
	b := newBlockingStarts()
	l := LimitStarts(b, 1, clk, reg, logr.Discard()).(*limitedStarts)
	go func() { _, _ = l.RunPodSandbox(context.Background(), sandboxConfig("first"), "") }()
	<-b.entered
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() { errc <- l.StartContainer(ctx, "c") }()
	waitQueued(t, l.slots, 1)
	clk.Step(4 * time.Second)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("a waiting call whose context ended: %v, want context.Canceled", err)
	}
	if n, sum := startWaits(t, reg, "start_container"); n != 1 || sum != 4 {
		t.Errorf("the cancelled start: %d waits observed summing %v s, want 1 of 4 s", n, sum)
	}
	b.proceed <- struct{}{}
}

func TestLimitStartsRegistersTheWaitOnlyWithALimit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n          int
		registered bool
	}{
		{"no limit registers nothing", 0, false},
		{"a negative limit is no limit and registers nothing", -1, false},
		{"a limit registers the wait histogram", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			LimitStarts(newBlockingStarts(), tc.n, clocktesting.NewFakeClock(time.Unix(0, 0)), reg, logr.Discard())
			err := reg.Register(newStartWaitMetric(nil))
			var are prometheus.AlreadyRegisteredError
			if got := errors.As(err, &are); got != tc.registered {
				t.Fatalf("LimitStarts(rs, %d) registered the histogram: %v (register again: %v), want %v", tc.n, got, err, tc.registered)
			}
		})
	}
}
