package pleg

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

func TestHealthy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		run       bool          // Run was started (and stopped at once)
		relist    bool          // a relist completed
		listErr   bool          // the relist failed to list
		elapsed   time.Duration // clock advance after that
		wantOK    bool
		wantError string
	}{
		{name: "a PLEG that never ran is healthy", elapsed: time.Hour, wantOK: true},
		{name: "a PLEG started within the threshold without a relist is healthy", run: true, elapsed: 3 * time.Minute, wantOK: true},
		{
			name: "a PLEG started beyond the threshold without a relist is unhealthy", run: true, elapsed: 3*time.Minute + time.Second,
			wantError: "pleg has not completed a relist since it started 3m1s ago; threshold is 3m0s",
		},
		{
			name: "a PLEG whose only relist failed is unhealthy beyond the threshold", run: true, relist: true, listErr: true, elapsed: 4 * time.Minute,
			wantError: "pleg has not completed a relist since it started 4m0s ago; threshold is 3m0s",
		},
		{name: "a relist within the threshold is healthy", relist: true, elapsed: 3 * time.Minute, wantOK: true},
		{
			name: "a relist older than the threshold is unhealthy", relist: true, elapsed: 5 * time.Minute,
			wantError: "pleg was last seen active 5m0s ago; threshold is 3m0s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, rt, clk, _ := newTestGeneric(t, Config{})
			if tt.run {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				if err := g.Run(ctx); err != nil {
					t.Fatalf("Run() = %v", err)
				}
			}
			if tt.listErr {
				rt.listErr = errors.New("runtime down")
			}
			if tt.relist {
				g.Relist(context.Background())
			}
			clk.Step(tt.elapsed)
			ok, err := g.Healthy()
			if ok != tt.wantOK {
				t.Errorf("Healthy() = %v, want %v", ok, tt.wantOK)
			}
			if got := errString(err); got != tt.wantError {
				t.Errorf("Healthy() error = %q, want %q", got, tt.wantError)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestRunRelistsPeriodicallyAndStopsOnCancel(t *testing.T) {
	t.Parallel()
	g, rt, clk, _ := newTestGeneric(t, Config{RelistPeriod: 5 * time.Second})
	lists := make(chan struct{}, 10)
	rt.onList = func() { lists <- struct{}{} }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()

	<-lists // the first relist runs right away
	waitForTimer(t, clk)
	clk.Step(4 * time.Second)
	if !clk.HasWaiters() {
		t.Fatal("the relist timer fired before RelistPeriod passed")
	}
	select {
	case <-lists:
		t.Fatal("relisted before RelistPeriod passed")
	default:
	}
	clk.Step(time.Second)
	<-lists
	waitForTimer(t, clk)

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run() = %v, want nil on a clean stop", err)
	}
	if ok, err := g.Healthy(); !ok {
		t.Errorf("Healthy() after two relists = %v", err)
	}
}

// waitForTimer returns once something waits on clk.
func waitForTimer(t *testing.T, clk interface{ HasWaiters() bool }) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("Run never waited for its next relist")
		}
		runtime.Gosched()
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "the zero config is valid", cfg: Config{}},
		{name: "explicit kubelet values are valid", cfg: Config{RelistPeriod: time.Second, RelistThreshold: 3 * time.Minute, ChannelCapacity: 1000}},
		{name: "a negative period is rejected", cfg: Config{RelistPeriod: -time.Second}, wantErr: "pleg: relistPeriod -1s must not be negative"},
		{name: "a negative threshold is rejected", cfg: Config{RelistThreshold: -time.Second}, wantErr: "pleg: relistThreshold -1s must not be negative"},
		{name: "a negative capacity is rejected", cfg: Config{ChannelCapacity: -1}, wantErr: "pleg: channelCapacity -1 must not be negative"},
		{
			name: "a threshold shorter than the default period is rejected", cfg: Config{RelistThreshold: time.Millisecond},
			wantErr: "pleg: relistThreshold 1ms must not be shorter than relistPeriod 1s",
		},
		{
			name: "a period longer than the default threshold is rejected", cfg: Config{RelistPeriod: time.Hour},
			wantErr: "pleg: relistThreshold 3m0s must not be shorter than relistPeriod 1h0m0s",
		},
	}
	for _, tt := range tests {
		if got := errString(tt.cfg.Validate()); got != tt.wantErr {
			t.Errorf("%s: Validate() = %q, want %q", tt.name, got, tt.wantErr)
		}
	}
}
