//go:build e2e

package e2e

import (
	"fmt"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkManifestToRunning measures, on the private containerd, the time
// from a manifest file appearing in the agent's directory to both of its
// containers running and ready in /pods (polled every 5ms). Each iteration
// writes a new two-container pod; it reports the median and the worst case.
//
//	go test -tags e2e -run '^$' -bench ManifestToRunning -benchtime 10x ./test/e2e/
func BenchmarkManifestToRunning(b *testing.B) {
	h := newAgentHarness(b)
	h.start()
	var samples []time.Duration
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("bench%d", i)
		start := time.Now()
		h.writeManifest(name+".yaml", twoContainerPod(h.env.Image, name, "bench"))
		h.pollPod(name, time.Minute, allReady)
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	b.ReportMetric(float64(samples[len(samples)/2].Milliseconds()), "ms-p50")
	b.ReportMetric(float64(samples[len(samples)-1].Milliseconds()), "ms-max")
}

// pollPod is waitPod with a 5ms poll, for measurements.
func (h *agentHarness) pollPod(name string, timeout time.Duration, cond func(*corev1.Pod) bool) {
	h.t.Helper()
	full := name + "-" + h.node
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		pods, err := h.pods()
		if err == nil {
			for i := range pods {
				if pods[i].Name == full && cond(&pods[i]) {
					return
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatalf("pod %s did not run within %s", full, timeout)
}

// BenchmarkRawCRITwoContainerPodStart is the baseline for
// BenchmarkManifestToRunning, measured in the same run on the same
// containerd: the bare CRI calls that start the same two-container pod
// (RunPodSandbox, then CreateContainer and StartContainer for each
// container), with no agent in between.
//
//	go test -tags e2e -run '^$' -bench 'ManifestToRunning|RawCRI' -benchtime 10x ./test/e2e/
func BenchmarkRawCRITwoContainerPodStart(b *testing.B) {
	env := loadEnv(b)
	rs := env.runtime(b)
	var samples []time.Duration
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("raw%d-%d", time.Now().UnixNano()%100000, i)
		samples = append(samples, rawTwoContainerStart(b, env, rs, name))
	}
	b.StopTimer()
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	b.ReportMetric(float64(samples[len(samples)/2].Milliseconds()), "ms-p50")
	b.ReportMetric(float64(samples[len(samples)-1].Milliseconds()), "ms-max")
}
