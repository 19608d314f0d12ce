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
	benchSynchronize(b, nodeStats(50<<20, 50<<30))
}

// BenchmarkSynchronize110PodsDisk is the same under nodefs pressure: the
// reclaim (a fake that frees nothing), then the disk ranking, which sums
// each pod's writable layers, logs and emptyDir volume stats.
func BenchmarkSynchronize110PodsDisk(b *testing.B) {
	benchSynchronize(b, nodeStats(500<<20, 5<<30))
}

func benchSynchronize(b *testing.B, node *statsapi.NodeStats) {
	var pods []*corev1.Pod
	var stats []statsapi.PodStats
	for i := 0; i < 110; i++ {
		name := fmt.Sprintf("pod-%03d", i)
		req := ""
		if i%3 == 0 {
			req = "64Mi"
		}
		p := pod(name, int32(i%5), req)
		p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		pods = append(pods, p)
		s := podStats(name, uint64(i+1)<<20, uint64(i)<<20, 10, 2)
		used := uint64(i) << 21
		s.VolumeStats = []statsapi.VolumeStats{{Name: "scratch", FsStats: statsapi.FsStats{UsedBytes: &used}}}
		stats = append(stats, s)
	}
	log := &reclaimLog{}
	f := &managerFixture{stats: &fakeStats{nodes: []*statsapi.NodeStats{node}, pods: stats},
		killer: &fakeKiller{}, events: &fakeEvents{}, reclaim: &fakeReclaimer{log: log}, dead: &fakeDead{log: log}}
	m, err := NewDefault(f.stats, fakePods(pods), f.killer, f.reclaim, f.dead, nil, f.events, clockForBench(), discard(), Config{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		evicted, err := m.Synchronize(ctx)
		if err != nil || evicted == nil {
			b.Fatal(evicted, err)
		}
		f.killer.kills, f.events.events, log.calls = f.killer.kills[:0], f.events.events[:0], log.calls[:0]
	}
}

func clockForBench() *clocktesting.FakeClock {
	return clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

func discard() logr.Logger { return logr.Discard() }
