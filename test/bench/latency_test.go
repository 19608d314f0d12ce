package bench

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/go-logr/logr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/runtime/sim"
	"github.com/nodekit/nodekit/sources"
)

// BenchmarkPodStartLatency measures one pod at a time from the agent seeing
// it to the agent showing it Running, on a zero-latency simulated runtime,
// so the figure is the agent's own overhead. The raw-cri baseline, measured
// in the same run, is the three CRI calls that start such a pod
// (RunPodSandbox, CreateContainer, StartContainer) made directly on the
// same simulated runtime: agent/raw-cri is the agent's cost over the bare
// runtime calls.
func BenchmarkPodStartLatency(b *testing.B) {
	b.Run("agent", func(b *testing.B) {
		r := startPipeline(b, 110000)
		samples := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			pod := benchPod(i)
			start := time.Now()
			r.Send(sources.ADD, pod)
			for !r.isRunning(pod.UID) {
			}
			samples = append(samples, time.Since(start))
		}
		b.StopTimer()
		reportPercentiles(b, samples)
	})
	b.Run("raw-cri", func(b *testing.B) {
		rt := sim.New(clock.RealClock{}, logr.Discard(), sim.Config{})
		ctx := context.Background()
		samples := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if i > 0 && i%20000 == 0 {
				b.StopTimer()
				removeAll(ctx, b, rt) // the simulated /16 pod network has room for 65534 pods
				b.StartTimer()
			}
			start := time.Now()
			if err := startRaw(ctx, rt, i); err != nil {
				b.Fatal(err)
			}
			samples = append(samples, time.Since(start))
		}
		b.StopTimer()
		reportPercentiles(b, samples)
	})
}

// startRaw starts a one-container pod with bare CRI calls.
func startRaw(ctx context.Context, rt *sim.Runtime, i int) error {
	name := fmt.Sprintf("raw%06d", i)
	sbCfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "bench", Uid: name}}
	sb, err := rt.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		return err
	}
	cCfg := &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "c"},
		Image: &runtimeapi.ImageSpec{Image: "sim/busybox:1"}}
	id, err := rt.CreateContainer(ctx, sb, cCfg, sbCfg)
	if err != nil {
		return err
	}
	return rt.StartContainer(ctx, id)
}

// removeAll removes every sandbox (and so every container) of rt.
func removeAll(ctx context.Context, b *testing.B, rt *sim.Runtime) {
	sbs, err := rt.ListPodSandbox(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, sb := range sbs {
		if err := rt.StopPodSandbox(ctx, sb.Id); err != nil {
			b.Fatal(err)
		}
		if err := rt.RemovePodSandbox(ctx, sb.Id); err != nil {
			b.Fatal(err)
		}
	}
}

func reportPercentiles(b *testing.B, samples []time.Duration) {
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	p := func(q float64) float64 {
		return float64(samples[int(q*float64(len(samples)-1))].Microseconds())
	}
	b.ReportMetric(p(0.5), "µs-p50")
	b.ReportMetric(p(0.99), "µs-p99")
}
