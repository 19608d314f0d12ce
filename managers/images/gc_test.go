package images

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// detectAt runs one detection pass at the fixture's current time.
func (f *fixture) detectAt(t *testing.T) {
	t.Helper()
	f.gc.mu.Lock()
	defer f.gc.mu.Unlock()
	if _, err := f.gc.detect(context.Background(), f.clk.Now()); err != nil {
		t.Fatal(err)
	}
}

func TestGarbageCollectBelowHighThresholdRemovesNothing(t *testing.T) {
	f := newFixture(t, Config{}, nil)
	f.images.add("sha256:a", "a:1", 100, false)
	f.fs.otherUsed = 740 // 84%
	f.detectAt(t)
	f.clk.Step(time.Hour)
	if err := f.gc.GarbageCollect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.images.ids(); len(got) != 1 {
		t.Fatalf("images = %v, want a kept", got)
	}
}

func TestGarbageCollectRemovesLeastRecentlyUsedFirstDownToLowThreshold(t *testing.T) {
	f := newFixture(t, Config{}, nil)
	for _, id := range []string{"sha256:a", "sha256:b", "sha256:c", "sha256:d"} {
		f.images.add(id, strings.TrimPrefix(id, "sha256:")+":1", 100, false)
	}
	f.fs.otherUsed = 500 // 900 of 1000 used: 90%
	f.rt.use("a:1", "sha256:a")
	f.rt.use("b:1", "sha256:b")
	f.detectAt(t) // a and b used now; c and d never
	f.rt.clear()
	f.clk.Step(time.Minute)
	f.rt.use("b:1", "sha256:b")
	f.detectAt(t) // b used again, later than a
	f.rt.clear()
	f.clk.Step(time.Hour)
	// To reach 80% it must free 100 bytes: the never used ones go first
	// (c then d by ID at equal times), and no more than needed.
	if err := f.gc.GarbageCollect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"sha256:c"}; !reflect.DeepEqual(f.images.removed, want) {
		t.Fatalf("removed %v, want %v", f.images.removed, want)
	}
	f.fs.otherUsed, f.fs.capacity = 800, 1200 // 1100 of 1200 used: 92%; 80% is 960 used: free 140
	if err := f.gc.GarbageCollect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"sha256:c", "sha256:d", "sha256:a"}; !reflect.DeepEqual(f.images.removed, want) {
		t.Fatalf("removed %v, want %v (never used, then least recently used)", f.images.removed, want)
	}
	if got := testutil.ToFloat64(f.gc.metrics.collected.WithLabelValues(reasonSpace)); got != 3 {
		t.Fatalf("image_garbage_collected_total{reason=space} = %v, want 3", got)
	}
}

func TestGarbageCollectOrdersEqualLastUseByFirstDetection(t *testing.T) {
	f := newFixture(t, Config{}, nil)
	f.images.add("sha256:z", "z:1", 100, false)
	f.detectAt(t)
	f.clk.Step(time.Minute)
	f.images.add("sha256:a", "a:1", 100, false)
	f.detectAt(t)
	f.clk.Step(time.Hour)
	f.fs.otherUsed = 750 // 950 of 1000; free 150: both, z (earlier) first
	if err := f.gc.GarbageCollect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"sha256:z", "sha256:a"}; !reflect.DeepEqual(f.images.removed, want) {
		t.Fatalf("removed %v, want %v", f.images.removed, want)
	}
}

func TestGarbageCollectKeepsUsedPinnedSandboxAndNewImagesAndReportsFailure(t *testing.T) {
	f := newFixture(t, Config{}, nil)
	f.rt.info = map[string]string{"config": `{"sandboxImage":"registry.k8s.io/pause:3.10"}`}
	f.images.add("sha256:used", "used:1", 100, false)
	f.images.add("sha256:pinned", "pinned:1", 100, true)
	f.images.add("sha256:pause", "registry.k8s.io/pause:3.10", 100, false)
	f.images.add("sha256:free", "free:1", 100, false)
	f.rt.use("used:1", "") // by tag only, as a container of another client might
	f.detectAt(t)
	f.clk.Step(time.Hour)
	f.images.add("sha256:new", "new:1", 100, false) // detected now: younger than MinAge
	f.fs.otherUsed = 500                            // 1000 of 1000
	err := f.gc.GarbageCollect(context.Background())
	if !errors.Is(err, ErrNotEnoughFreed) {
		t.Fatalf("GarbageCollect = %v, want ErrNotEnoughFreed", err)
	}
	if want := []string{"sha256:free"}; !reflect.DeepEqual(f.images.removed, want) {
		t.Fatalf("removed %v, want only %v", f.images.removed, want)
	}
	if got := f.events.reasons(); !reflect.DeepEqual(got, []string{ReasonFreeDiskSpaceFailed}) {
		t.Fatalf("events %v, want FreeDiskSpaceFailed", got)
	}
	if msg := f.events.events[0].message; msg != "Failed to garbage collect required amount of images. Attempted to free 200 bytes, but only found 100 bytes eligible to free." {
		t.Fatalf("event message %q", msg)
	}
}

func TestGarbageCollectHonoursConfiguredSandboxImageAndFilter(t *testing.T) {
	f := newFixture(t, Config{SandboxImage: "pause:9"}, func(img *runtimeapi.Image) bool {
		return strings.HasPrefix(img.RepoTags[0], "mine-")
	})
	f.images.add("sha256:pause", "pause:9", 100, false)
	f.images.add("sha256:other", "other:1", 100, false)
	f.images.add("sha256:mine", "mine-1:1", 100, false)
	f.detectAt(t)
	f.clk.Step(time.Hour)
	freed, err := f.gc.DeleteUnusedImages(context.Background())
	if err != nil || freed != 100 {
		t.Fatalf("DeleteUnusedImages = %d, %v; want 100, nil", freed, err)
	}
	if want := []string{"sha256:other", "sha256:pause"}; !reflect.DeepEqual(f.images.ids(), want) {
		t.Fatalf("images left %v, want %v", f.images.ids(), want)
	}
}

func TestGarbageCollectMaxAge(t *testing.T) {
	f := newFixture(t, Config{MaxAge: 10 * time.Minute}, nil)
	f.images.add("sha256:old", "old:1", 100, false)
	f.images.add("sha256:recent", "recent:1", 100, false)
	f.rt.use("recent:1", "sha256:recent")
	f.detectAt(t)
	f.clk.Step(5 * time.Minute)
	f.detectAt(t) // recent used 5 minutes in
	f.rt.clear()
	f.clk.Step(5 * time.Minute) // 10m in: not past MaxAge since start
	if err := f.gc.GarbageCollect(context.Background()); err != nil || len(f.images.removed) != 0 {
		t.Fatalf("GarbageCollect at MaxAge = %v, removed %v; want nothing yet", err, f.images.removed)
	}
	f.clk.Step(time.Minute) // old unused 11m, recent 6m
	if err := f.gc.GarbageCollect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"sha256:old"}; !reflect.DeepEqual(f.images.removed, want) {
		t.Fatalf("removed %v, want %v", f.images.removed, want)
	}
	if got := testutil.ToFloat64(f.gc.metrics.collected.WithLabelValues(reasonAge)); got != 1 {
		t.Fatalf("image_garbage_collected_total{reason=age} = %v, want 1", got)
	}
}

func TestGarbageCollectHighThreshold100TurnsUsageCollectionOff(t *testing.T) {
	f := newFixture(t, Config{HighThresholdPercent: 100, LowThresholdPercent: 99}, nil)
	f.images.add("sha256:a", "a:1", 100, false)
	f.fs.otherUsed = 900
	f.detectAt(t)
	f.clk.Step(time.Hour)
	if err := f.gc.GarbageCollect(context.Background()); err != nil || len(f.images.removed) != 0 {
		t.Fatalf("GarbageCollect = %v, removed %v", err, f.images.removed)
	}
}

func TestGarbageCollectErrors(t *testing.T) {
	f := newFixture(t, Config{}, nil)
	f.fs.capacity = 0
	if err := f.gc.GarbageCollect(context.Background()); err == nil || !strings.Contains(err.Error(), "invalid capacity 0") {
		t.Fatalf("GarbageCollect = %v, want invalid capacity", err)
	}
	if got := f.events.reasons(); !reflect.DeepEqual(got, []string{ReasonInvalidDiskCapacity}) {
		t.Fatalf("events %v", got)
	}
	f.fs.capacity = 1000
	f.images.add("sha256:busy", "busy:1", 100, false)
	f.images.failIDs["sha256:busy"] = true
	f.fs.otherUsed = 900
	f.detectAt(t)
	f.clk.Step(time.Hour)
	if err := f.gc.GarbageCollect(context.Background()); err == nil || !strings.Contains(err.Error(), "is busy") {
		t.Fatalf("GarbageCollect = %v, want the removal error", err)
	}
}

func TestRunRecordsImageGCFailedOnRepeatedFailure(t *testing.T) {
	f := newFixture(t, Config{}, nil)
	f.fs.err = errors.New("no stats yet")
	f.events.ch = make(chan event, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- f.gc.Run(ctx) }()
	waitTicker(t, f)
	if got := f.events.reasons(); len(got) != 0 {
		t.Fatalf("events after one failure %v, want none", got)
	}
	f.clk.Step(DefaultPeriod)
	select {
	case ev := <-f.events.ch:
		if ev.reason != ReasonImageGCFailed || ev.kind != "Warning" || !strings.Contains(ev.message, "no stats yet") {
			t.Fatalf("event %+v, want a Warning ImageGCFailed with the error", ev)
		}
	case <-time.After(time.Minute):
		t.Fatal("no event after the second failure")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func waitTicker(t *testing.T, f *fixture) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !f.clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("Run never started its ticker")
		}
		runtime.Gosched()
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"the zero value is valid", Config{}, ""},
		{"a high threshold above 100 is refused", Config{HighThresholdPercent: 101}, "between 0 and 100"},
		{"a low threshold at the high one is refused", Config{HighThresholdPercent: 70, LowThresholdPercent: 70}, "less than highThresholdPercent"},
		{"the default low threshold above a lowered high one is refused", Config{HighThresholdPercent: 50}, "less than highThresholdPercent"},
		{"a negative minimum age is refused", Config{MinAge: -time.Second}, "minAge"},
		{"a maximum age not above the minimum is refused", Config{MaxAge: time.Minute}, "greater than minAge"},
		{"a maximum age above the minimum is valid", Config{MaxAge: time.Hour}, ""},
		{"a negative period is refused", Config{Period: -time.Second}, "period"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}
