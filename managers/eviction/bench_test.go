package eviction

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	clocktesting "k8s.io/utils/clock/testing"

	corev1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// BenchmarkSynchronize110Pods is one monitoring pass at 110 pods under
// memory pressure: observe, decide, rank and evict one pod (fakes for the
// stats and the kill, so this is the manager's own cost).
func BenchmarkSynchronize110Pods(b *testing.B) {
	var pods []*corev1.Pod
	var stats []statsapi.PodStats
	for i := 0; i < 110; i++ {
		name := fmt.Sprintf("pod-%03d", i)
		req := ""
		if i%3 == 0 {
			req = "64Mi"
		}
		pods = append(pods, pod(name, int32(i%5), req))
		stats = append(stats, podStats(name, uint64(i+1)<<20, uint64(i)<<20, 10, 2))
	}
	f := &managerFixture{stats: &fakeStats{nodes: []*statsapi.NodeStats{nodeStats(50<<20, 50<<30)}, pods: stats},
		killer: &fakeKiller{}, events: &fakeEvents{}}
	m, err := NewDefault(f.stats, fakePods(pods), f.killer, nil, nil, nil, f.events, clockForBench(), discard(), Config{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Synchronize(ctx); err != nil {
			b.Fatal(err)
		}
		f.killer.kills, f.events.events = f.killer.kills[:0], f.events.events[:0]
	}
}

func clockForBench() *clocktesting.FakeClock {
	return clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

func discard() logr.Logger { return logr.Discard() }
