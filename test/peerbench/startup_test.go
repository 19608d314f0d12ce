package main

import (
	"math"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

func TestQuantilesOfNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	q := quantilesOf(ds)
	if q.p50 != 50*time.Millisecond || q.p99 != 99*time.Millisecond || q.max != 100*time.Millisecond || q.mean != 50500*time.Microsecond {
		t.Fatalf("quantiles of 1..100 ms: %+v", q)
	}
	if ds[0] != 100*time.Millisecond {
		t.Fatal("quantilesOf sorted its input in place")
	}
	if q := quantilesOf([]time.Duration{time.Second}); q.p50 != time.Second || q.p99 != time.Second || q.mean != time.Second {
		t.Fatalf("one sample: %+v", q)
	}
	if q := quantilesOf(nil); q != (quantiles{}) {
		t.Fatalf("no sample: %+v", q)
	}
}

func TestMaxBound(t *testing.T) {
	bucket := func(le float64, n uint64) *dto.Bucket { return &dto.Bucket{UpperBound: &le, CumulativeCount: &n} }
	buckets := []*dto.Bucket{bucket(0.1, 3), bucket(1, 9), bucket(10, 10)}
	for _, tc := range []struct {
		count uint64
		want  float64
	}{{0, 0}, {3, 0.1}, {9, 1}, {10, 10}, {11, math.Inf(1)}} {
		if got := (relistTotals{count: tc.count, buckets: buckets}).maxBound(); got != tc.want {
			t.Errorf("count %d: maxBound %v, want %v", tc.count, got, tc.want)
		}
	}
}

func TestRunningTrackerKeepsFirstSighting(t *testing.T) {
	r := runningTracker{}
	t0 := time.Unix(100, 0)
	r.note([]string{"pb-0"}, t0)
	r.note([]string{"pb-0", "pb-1"}, t0.Add(time.Second))
	if r["pb-0"] != t0 || r["pb-1"] != t0.Add(time.Second) {
		t.Fatalf("tracker: %v", r)
	}
}
