package sources

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// BenchmarkStoreMergeAPISnapshot measures the merge of one API server
// snapshot of a node's N pods in which one pod's status changed (one
// status patch of the agent's comes back through the watch): what the
// Mux does for every change on a node with N pods.
func BenchmarkStoreMergeAPISnapshot(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			base := make([]*corev1.Pod, n)
			for j := range base {
				base[j] = pod(fmt.Sprintf("p%03d", j), withVersion("1"), withLabel("app", "bench"), withPhase(corev1.PodRunning))
			}
			s := newStore(logr.Discard())
			s.merge(APIServerSource, copyPods(base), epoch)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				snap := copyPods(base) // the source's own copies, as podStore.snapshot makes them
				changed := snap[i%n]
				changed.ResourceVersion = strconv.Itoa(i + 2)
				changed.Status.Message = strconv.Itoa(i)
				base[i%n] = changed.DeepCopy()
				b.StartTimer()
				if got := s.merge(APIServerSource, snap, epoch); len(got) != 1 {
					b.Fatalf("got %d updates, want the one RECONCILE", len(got))
				}
			}
		})
	}
}
