package pleg

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// at returns epoch plus n seconds.
func at(n int) time.Time { return epoch.Add(time.Duration(n) * time.Second) }

// newTestCache returns a cache whose clock is 100s after epoch, so that at(n)
// for n < 100 is in the past.
func newTestCache() (*Cache, *testingclock.FakeClock) {
	clk := testingclock.NewFakeClock(at(100))
	return NewCache(clk), clk
}

func status(uid types.UID, ip string) *noderuntime.PodStatus {
	return &noderuntime.PodStatus{ID: uid, IPs: []string{ip}}
}

func TestCacheGet(t *testing.T) {
	t.Parallel()
	c, _ := newTestCache()
	errInspect := errors.New("inspect failed")

	got, err := c.Get("absent")
	if err != nil || got == nil || got.ID != "absent" || len(got.ContainerStatuses) != 0 {
		t.Errorf("Get(absent) = %+v, %v; want an empty status with ID set", got, err)
	}
	want := status("p", "10.0.0.1")
	c.Set("p", want, nil, at(1))
	if got, err := c.Get("p"); got != want || err != nil {
		t.Errorf("Get(p) = %p, %v; want the stored pointer %p and no error", got, err, want)
	}
	c.Set("p", nil, errInspect, at(2))
	got, err = c.Get("p")
	if !errors.Is(err, errInspect) || got == nil || got.ID != "p" {
		t.Errorf("Get(p) after a failed inspection = %+v, %v; want an empty status and the error", got, err)
	}
	c.Delete("p")
	if got, err := c.Get("p"); err != nil || len(got.IPs) != 0 {
		t.Errorf("Get(p) after Delete = %+v, %v; want an empty status", got, err)
	}
}

func TestCacheSetNeverGoesBackInTime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		first, then time.Time
		wantUpdated bool
		wantIP      string
	}{
		{"a newer status replaces the stored one", at(1), at(2), true, "new"},
		{"a status with the same timestamp replaces the stored one", at(1), at(1), true, "new"},
		{"an older status is ignored", at(2), at(1), false, "old"},
		{"a future status is clamped to now so a later one still wins", at(500), at(101), true, "new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, clk := newTestCache()
			c.Set("p", status("p", "old"), nil, tt.first)
			clk.SetTime(at(200))
			if got := c.Set("p", status("p", "new"), nil, tt.then); got != tt.wantUpdated {
				t.Errorf("Set() = %v, want %v", got, tt.wantUpdated)
			}
			if got, _ := c.Get("p"); got.IPs[0] != tt.wantIP {
				t.Errorf("stored status %q, want %q", got.IPs[0], tt.wantIP)
			}
		})
	}
}

func TestCacheUpdateTimeNeverGoesBackwards(t *testing.T) {
	t.Parallel()
	c, _ := newTestCache()
	c.UpdateTime(at(5))
	c.UpdateTime(at(3))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.GetNewerThan(ctx, "p", at(4)); err != nil {
		t.Errorf("GetNewerThan(at 4) after UpdateTime(5), UpdateTime(3) = %v; want the status at once", err)
	}
	if _, err := c.GetNewerThan(ctx, "p", at(5)); !errors.Is(err, context.Canceled) {
		t.Errorf("GetNewerThan(at 5) = %v; want it to wait (and see ctx end)", err)
	}
}

// result is what a GetNewerThan call returned.
type result struct {
	status *noderuntime.PodStatus
	err    error
}

// waitAsync calls GetNewerThan in a goroutine and returns once the call is
// registered as a waiter.
func waitAsync(t *testing.T, ctx context.Context, c *Cache, uid types.UID, minTime time.Time) <-chan result {
	t.Helper()
	before := waiterCount(c, uid)
	ch := make(chan result, 1)
	go func() {
		s, err := c.GetNewerThan(ctx, uid, minTime)
		ch <- result{s, err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for waiterCount(c, uid) == before {
		if time.Now().After(deadline) {
			t.Fatalf("GetNewerThan(%s) never started waiting", uid)
		}
		runtime.Gosched()
	}
	return ch
}

func waiterCount(c *Cache, uid types.UID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters[uid])
}

// expectPending fails if ch already has a result.
func expectPending(t *testing.T, ch <-chan result, why string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("GetNewerThan returned %+v, %v %s; want it to keep waiting", r.status, r.err, why)
	default:
	}
}

// expectResult waits for ch's result.
func expectResult(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("GetNewerThan is still waiting; want it woken")
		return result{}
	}
}

func TestCacheGetNewerThanReturnsAtOnceWhenNewer(t *testing.T) {
	t.Parallel()
	c, _ := newTestCache()
	s := status("p", "a")
	c.Set("p", s, nil, at(10))
	if got, err := c.GetNewerThan(context.Background(), "p", at(9)); got != s || err != nil {
		t.Errorf("GetNewerThan(at 9) = %v, %v; want the entry set at 10", got, err)
	}
	c.UpdateTime(at(20))
	if got, err := c.GetNewerThan(context.Background(), "p", at(15)); got != s || err != nil {
		t.Errorf("GetNewerThan(at 15) after UpdateTime(20) = %v, %v; want the entry", got, err)
	}
	if got, err := c.GetNewerThan(context.Background(), "absent", at(15)); err != nil || got.ID != "absent" {
		t.Errorf("GetNewerThan(absent, at 15) = %v, %v; want an empty status", got, err)
	}
}

func TestCacheGetNewerThanWaitsForSet(t *testing.T) {
	t.Parallel()
	c, _ := newTestCache()
	ctx := context.Background()
	c.Set("p", status("p", "old"), nil, at(10))
	ch := waitAsync(t, ctx, c, "p", at(10))
	c.Set("p", status("p", "same"), nil, at(10))
	expectPending(t, ch, "after a Set at minTime")
	c.Set("other", status("other", "x"), nil, at(11))
	expectPending(t, ch, "after a Set of another pod")
	c.UpdateTime(at(10))
	expectPending(t, ch, "after UpdateTime at minTime")
	want := status("p", "new")
	c.Set("p", want, nil, at(11))
	if r := expectResult(t, ch); r.status != want || r.err != nil {
		t.Errorf("GetNewerThan = %+v, %v; want the status set at 11", r.status, r.err)
	}
	if n := waiterCount(c, "p"); n != 0 {
		t.Errorf("%d waiters left, want 0", n)
	}
}

func TestCacheGetNewerThanWaitsForUpdateTime(t *testing.T) {
	t.Parallel()
	c, _ := newTestCache()
	ctx := context.Background()
	s := status("p", "a")
	c.Set("p", s, nil, at(5))
	chP := waitAsync(t, ctx, c, "p", at(10))
	chAbsent := waitAsync(t, ctx, c, "absent", at(10))
	chLater := waitAsync(t, ctx, c, "p", at(30))
	c.UpdateTime(at(20))
	if r := expectResult(t, chP); r.status != s || r.err != nil {
		t.Errorf("GetNewerThan(p) = %+v, %v; want the unchanged entry", r.status, r.err)
	}
	if r := expectResult(t, chAbsent); r.err != nil || r.status.ID != "absent" {
		t.Errorf("GetNewerThan(absent) = %+v, %v; want an empty status", r.status, r.err)
	}
	expectPending(t, chLater, "for minTime 30 after UpdateTime(20)")
	c.UpdateTime(at(31))
	expectResult(t, chLater)
}

func TestCacheGetNewerThanHonorsContext(t *testing.T) {
	t.Parallel()
	c, _ := newTestCache()
	ctx, cancel := context.WithCancel(context.Background())
	ch := waitAsync(t, ctx, c, "p", at(10))
	cancel()
	if r := expectResult(t, ch); r.status != nil || !errors.Is(r.err, context.Canceled) {
		t.Errorf("GetNewerThan = %+v, %v; want nil and context.Canceled", r.status, r.err)
	}
	if n := waiterCount(c, "p"); n != 0 {
		t.Errorf("%d waiters left after cancel, want 0", n)
	}
	// The cache still works for the next caller.
	c.Set("p", status("p", "a"), nil, at(11))
	if _, err := c.GetNewerThan(context.Background(), "p", at(10)); err != nil {
		t.Errorf("GetNewerThan after a cancelled call = %v", err)
	}
}

func TestCacheManyWaitersWakeTogether(t *testing.T) {
	t.Parallel()
	c, _ := newTestCache()
	ctx := context.Background()
	var chans []<-chan result
	for range 20 {
		chans = append(chans, waitAsync(t, ctx, c, "p", at(10)))
	}
	c.Set("p", status("p", "a"), errors.New("inspect failed"), at(11))
	for _, ch := range chans {
		if r := expectResult(t, ch); r.err == nil || r.err.Error() != "inspect failed" {
			t.Errorf("GetNewerThan = %v; want the stored inspection error", r.err)
		}
	}
}
