package bench

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/sources"
)

// BenchmarkPodStartThroughput measures pods per second from the agent
// seeing N pods in one ADD to all of them Running, through the real pod
// workers, sync loop and CRI manager on a zero-latency simulated runtime.
func BenchmarkPodStartThroughput(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		b.Run(sizeName(n), func(b *testing.B) {
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				r := startPipeline(b, n)
				pods := make([]*corev1.Pod, n)
				uids := make([]types.UID, n)
				for j := range pods {
					pods[j] = benchPod(j)
					uids[j] = pods[j].UID
				}
				b.StartTimer()
				start := time.Now()
				r.Send(sources.ADD, pods...)
				r.waitRunning(b, uids, 5*time.Minute)
				total += time.Since(start)
				b.StopTimer()
				r.stop()
			}
			b.ReportMetric(float64(n*b.N)/total.Seconds(), "pods/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func sizeName(n int) string {
	switch n {
	case 100:
		return "pods=100"
	case 1000:
		return "pods=1000"
	}
	return "pods=5000"
}
