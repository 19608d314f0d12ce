package pleg

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// BenchmarkRelist measures a relist of a runtime where nothing changed: pods
// of 5 running containers and one ready sandbox each, so N containers means
// N/5 pods. The fake runtime hands out the same list every time, so the
// figures are the PLEG's own cost.
func BenchmarkRelist(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("containers=%d", n), func(b *testing.B) {
			rt := newFakeRuntime()
			var pods []*noderuntime.Pod
			for i := range n / 5 {
				p := pod(types.UID(fmt.Sprint("pod-", i)), sandbox(fmt.Sprint("s-", i), run))
				for j := range 5 {
					p.Containers = append(p.Containers, ctr(fmt.Sprint("c-", i, "-", j), run))
				}
				pods = append(pods, p)
			}
			rt.setPods(pods...)
			clk := testingclock.NewFakeClock(epoch)
			g := NewGeneric(rt, NewCache(clk), clk, nil, logr.Discard(), Config{ChannelCapacity: 2 * n})
			ctx := context.Background()
			g.Relist(ctx)
			inspected := rt.inspections()

			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				g.Relist(ctx)
			}
			b.StopTimer()
			if got := rt.inspections(); got != inspected {
				b.Fatalf("unchanged relists inspected %d pods, want 0", got-inspected)
			}
		})
	}
}
