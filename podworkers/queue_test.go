package podworkers

import (
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
)

func TestWorkQueue(t *testing.T) {
	type enqueue struct {
		uid   types.UID
		delay time.Duration
	}
	tests := []struct {
		name    string
		enqueue []enqueue
		step    time.Duration
		want    []types.UID
	}{
		{"an empty queue has no work", nil, time.Hour, nil},
		{"a zero delay is due at once", []enqueue{{"a", 0}}, 0, []types.UID{"a"}},
		{"a pod is due exactly at its time", []enqueue{{"a", time.Second}}, time.Second, []types.UID{"a"}},
		{"a pod is not due before its time", []enqueue{{"a", time.Second}}, time.Second - 1, nil},
		{"only due pods are returned", []enqueue{{"a", time.Second}, {"b", time.Minute}, {"c", 0}}, time.Second, []types.UID{"a", "c"}},
		{"a later enqueue keeps the sooner due time", []enqueue{{"a", 0}, {"a", time.Minute}}, time.Second, []types.UID{"a"}},
		{"a sooner enqueue replaces a later one", []enqueue{{"a", time.Minute}, {"a", 0}}, 0, []types.UID{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(t0)
			q := NewWorkQueue(clk)
			for _, e := range tt.enqueue {
				q.Enqueue(e.uid, e.delay)
			}
			clk.Step(tt.step)
			got := q.GetWork()
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("GetWork() = %v, want %v", got, tt.want)
			}
			if again := q.GetWork(); len(again) != 0 {
				t.Errorf("second GetWork() = %v, want the work removed", again)
			}
		})
	}
}

func TestWorkQueueIsSafeForConcurrentUse(t *testing.T) {
	q := NewWorkQueue(testingclock.NewFakeClock(t0))
	var wg sync.WaitGroup
	got := make(chan []types.UID, 100)
	for i := range 50 {
		wg.Go(func() { q.Enqueue(types.UID(rune('A'+i)), 0) })
		wg.Go(func() { got <- q.GetWork() })
	}
	wg.Wait()
	close(got)
	seen := map[types.UID]int{}
	for uids := range got {
		for _, uid := range uids {
			seen[uid]++
		}
	}
	for _, uid := range q.GetWork() {
		seen[uid]++
	}
	if len(seen) != 50 {
		t.Errorf("got %d distinct UIDs, want 50", len(seen))
	}
	for uid, n := range seen {
		if n != 1 {
			t.Errorf("UID %s returned %d times, want once", uid, n)
		}
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr bool
		want    Config
	}{
		{"the zero value means the defaults", Config{}, false, Config{ResyncInterval: time.Minute, BackOffPeriod: 10 * time.Second, TransientRetry: time.Second, TerminationStatusWait: 5 * time.Second}},
		{"set fields are kept", Config{ResyncInterval: 5 * time.Second, BackOffPeriod: 2 * time.Second, TransientRetry: time.Millisecond, TerminationStatusWait: time.Second}, false,
			Config{ResyncInterval: 5 * time.Second, BackOffPeriod: 2 * time.Second, TransientRetry: time.Millisecond, TerminationStatusWait: time.Second}},
		{"a negative resync interval is invalid", Config{ResyncInterval: -1}, true, Config{}},
		{"a negative back-off period is invalid", Config{BackOffPeriod: -1}, true, Config{}},
		{"a negative transient retry is invalid", Config{TransientRetry: -1}, true, Config{}},
		{"a negative termination status wait is invalid", Config{TerminationStatusWait: -1}, true, Config{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Validate() = %v, want error %v", err, tt.wantErr)
			}
			if got := tt.cfg.withDefaults(); !tt.wantErr && got != tt.want {
				t.Errorf("withDefaults() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
