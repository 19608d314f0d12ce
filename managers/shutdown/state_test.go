package shutdown

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestShutdownTimesAreKeptInTheStateFileAndTheGauges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	trig, calls := newFakeTrigger(), make(chan *kill, 4)
	reg := prometheus.NewRegistry()
	cfg := Config{GracePeriod: 30 * time.Second, StateDirectory: dir}
	m, err := NewDefault(fakePods{pod("a", nil, nil)}, &fakeKiller{clk: clk, calls: calls}, trig, &fakeEvents{}, clk, reg, logr.Discard(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	trig.ch <- true
	k := next(t, calls)
	if got := testutil.ToFloat64(m.metrics.start); got != 1000 {
		t.Errorf("start gauge %v during the shutdown, want 1000", got)
	}
	if got := testutil.ToFloat64(m.metrics.end); got != 0 {
		t.Errorf("end gauge %v during the shutdown, want 0", got)
	}
	clk.Step(3 * time.Second)
	close(k.finish)
	<-trig.released
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil || !st.StartTime.Equal(time.Unix(1000, 0)) || !st.EndTime.Equal(time.Unix(1003, 0)) {
		t.Fatalf("state file %s (%v), want start 1000 and end 1003", b, err)
	}

	// A restarted manager shows the last shutdown.
	reg2 := prometheus.NewRegistry()
	m2, err := NewDefault(fakePods(nil), &fakeKiller{clk: clk, calls: calls}, newFakeTrigger(), &fakeEvents{}, clk, reg2, logr.Discard(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() { done <- m2.Run(ctx2) }()
	for deadline := time.Now().Add(10 * time.Second); testutil.ToFloat64(m2.metrics.end) != 1003; {
		if time.Now().After(deadline) {
			t.Fatalf("restarted gauges start %v end %v, want 1000 and 1003",
				testutil.ToFloat64(m2.metrics.start), testutil.ToFloat64(m2.metrics.end))
		}
		runtime.Gosched()
	}
	if got := testutil.ToFloat64(m2.metrics.start); got != 1000 {
		t.Errorf("restarted start gauge %v, want 1000", got)
	}
	cancel2()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg2, "kubelet_graceful_shutdown_start_time_seconds", "kubelet_graceful_shutdown_end_time_seconds"); err != nil || n != 2 {
		t.Errorf("registry has %d of the two gauges (%v)", n, err)
	}
}
