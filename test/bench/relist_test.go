package bench

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/sources"
)

// BenchmarkRelistUnchanged measures one generic PLEG relist of N unchanged
// running containers (N pods of one container each) through the real CRI
// manager on the simulated runtime: two list calls and the diff; no pod is
// inspected because nothing changed.
func BenchmarkRelistUnchanged(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		b.Run(sizeName(n), func(b *testing.B) {
			r := startPipeline(b, n+1)
			pods := make([]*corev1.Pod, n)
			uids := make([]types.UID, n)
			for j := range pods {
				pods[j] = benchPod(j)
				uids[j] = pods[j].UID
			}
			r.Send(sources.ADD, pods...)
			r.waitRunning(b, uids, 5*time.Minute)
			r.stop() // the agent's own relists would race the measured ones
			ctx := context.Background()
			r.PLEG.Relist(ctx) // settle the records
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.PLEG.Relist(ctx)
			}
		})
	}
}
