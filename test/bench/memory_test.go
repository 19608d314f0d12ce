package bench

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/runtime/sim"
	"github.com/nodekit/nodekit/sources"
)

const memPods = 1000

// BenchmarkMemoryPerPod measures the heap retained per running pod with
// 1,000 one-container pods: the whole pipeline (agent and simulated
// runtime), the simulated runtime alone holding the same 1,000 pods (the
// baseline, in the same run), and their difference, the agent's own
// bytes per pod.
func BenchmarkMemoryPerPod(b *testing.B) {
	var whole, simOnly float64
	for i := 0; i < b.N; i++ {
		whole += heapPerPod(b, func() func() {
			r := startPipeline(b, memPods+1)
			pods := make([]*corev1.Pod, memPods)
			uids := make([]types.UID, memPods)
			for j := range pods {
				pods[j] = benchPod(j)
				uids[j] = pods[j].UID
			}
			r.Send(sources.ADD, pods...)
			r.waitRunning(b, uids, 5*time.Minute)
			return func() { runtime.KeepAlive(r) }
		})
		simOnly += heapPerPod(b, func() func() {
			rt := sim.New(clock.RealClock{}, logr.Discard(), sim.Config{})
			for j := 0; j < memPods; j++ {
				if err := startRaw(context.Background(), rt, j); err != nil {
					b.Fatal(err)
				}
			}
			return func() { runtime.KeepAlive(rt) }
		})
	}
	b.ReportMetric(whole/float64(b.N), "B/pod-total")
	b.ReportMetric(simOnly/float64(b.N), "B/pod-sim")
	b.ReportMetric((whole-simOnly)/float64(b.N), "B/pod-agent")
	b.ReportMetric(0, "ns/op")
}

// heapPerPod returns the live heap that build adds, per pod, measured after
// garbage collection while what build made is still reachable.
func heapPerPod(b *testing.B, build func() (keep func())) float64 {
	b.Helper()
	before := liveHeap()
	keep := build()
	after := liveHeap()
	keep()
	return float64(int64(after)-int64(before)) / memPods
}

func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
