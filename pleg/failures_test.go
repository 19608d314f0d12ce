package pleg

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	testingclock "k8s.io/utils/clock/testing"
)

// relister is what the failure tests drive: Generic or Evented.
type relister interface {
	Interface
	Relist(ctx context.Context)
}

// failingRelists relists until the PLEG turns unhealthy while every listing
// fails, and returns how many relists that took (0: it never did within
// limit); the clock never moves, so the age of the last good relist plays
// no part.
func failingRelists(t *testing.T, p relister, rt *fakeRuntime, limit int) int {
	t.Helper()
	p.Relist(context.Background()) // a good relist first
	if ok, err := p.Healthy(); !ok {
		t.Fatalf("Healthy after a good relist = %v", err)
	}
	rt.mu.Lock()
	rt.listErr = errors.New("rpc error: code = ResourceExhausted desc = grpc: received message larger than max (18875806 vs. 16777216)")
	rt.mu.Unlock()
	for n := 1; n <= limit; n++ {
		p.Relist(context.Background())
		if ok, err := p.Healthy(); !ok {
			if !strings.Contains(err.Error(), "ResourceExhausted") || !strings.Contains(err.Error(), "relists could not list the runtime") {
				t.Errorf("Healthy error = %v, want the count and the last listing error", err)
			}
			return n
		}
	}
	return 0
}

func TestRelistsThatKeepFailingTurnThePLEGUnhealthy(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		threshold int
		want      int
	}{
		{name: "the default threshold", want: DefaultRelistFailureThreshold},
		{name: "a configured threshold", threshold: 3, want: 3},
	} {
		cfg := Config{RelistFailureThreshold: tt.threshold}
		t.Run("generic/"+tt.name, func(t *testing.T) {
			t.Parallel()
			g, rt, _, _ := newTestGeneric(t, cfg)
			if got := failingRelists(t, g, rt, 100); got != tt.want {
				t.Fatalf("unhealthy after %d failed relists, want %d", got, tt.want)
			}
			recovers(t, g, rt)
		})
		t.Run("evented/"+tt.name, func(t *testing.T) {
			t.Parallel()
			clk := testingclock.NewFakeClock(epoch)
			rt := newFakeRuntime()
			e := NewEvented(newFakeSource(), rt, fakeDecoder{}, NewCache(clk), clk, nil, testr.New(t), cfg)
			if got := failingRelists(t, e, rt, 100); got != tt.want {
				t.Fatalf("unhealthy after %d failed relists, want %d", got, tt.want)
			}
			recovers(t, e, rt)
		})
	}
}

// recovers checks that one good relist makes the PLEG healthy again.
func recovers(t *testing.T, p relister, rt *fakeRuntime) {
	t.Helper()
	rt.mu.Lock()
	rt.listErr = nil
	rt.mu.Unlock()
	p.Relist(context.Background())
	if ok, err := p.Healthy(); !ok {
		t.Fatalf("Healthy after the runtime lists again = %v", err)
	}
}

func TestConfigRejectsANegativeRelistFailureThreshold(t *testing.T) {
	t.Parallel()
	err := Config{RelistFailureThreshold: -1}.Validate()
	if err == nil || !strings.Contains(err.Error(), "relistFailureThreshold -1") {
		t.Fatalf("Validate = %v, want the field named", err)
	}
}
