//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// BenchmarkStartOverhead measures the agent's per-pod start overhead at p50
// and p99 against the bare CRI calls, the two interleaved in one run on the
// same containerd so that both see the same load: each iteration starts a
// two-container pod with the bare CRI calls (as
// BenchmarkRawCRITwoContainerPodStart) and removes it, then writes the same
// pod's manifest for a running agent, times it to both containers running
// and ready in /pods (polled every 5ms, as BenchmarkManifestToRunning),
// removes the manifest and waits for the pod to be gone and its sandbox
// stopped. Each side starts from the same runtime: no pod of the benchmark
// runs, or is being stopped, while another starts.
// It reports both sides' p50 and p99 (nearest rank) and their ratios.
//
//	go test -tags e2e -run '^$' -bench StartOverhead -benchtime 50x ./test/e2e/
func BenchmarkStartOverhead(b *testing.B) {
	h := newAgentHarness(b)
	h.start()
	rs := h.env.runtime(b)
	var raw, agent []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		raw = append(raw, rawTwoContainerStart(b, h.env, rs, fmt.Sprintf("so%d-%d", time.Now().UnixNano()%100000, i)))
		name := fmt.Sprintf("so%d", i)
		start := time.Now()
		h.writeManifest(name+".yaml", twoContainerPod(h.env.Image, name, "bench"))
		h.pollPod(name, time.Minute, allReady)
		agent = append(agent, time.Since(start))
		h.removeManifest(name + ".yaml")
		h.pollGone(name, time.Minute)
		// The pod leaves /pods once its containers stopped; its sandbox's
		// stop (the network teardown) may still run and would load the
		// next bare start.
		waitNoReadySandbox(b, rs, name+"-"+h.node, time.Minute)
	}
	b.StopTimer()
	r, a := quantiles(raw), quantiles(agent)
	b.ReportMetric(ms(a[0]), "agent-ms-p50")
	b.ReportMetric(ms(a[1]), "agent-ms-p99")
	b.ReportMetric(ms(r[0]), "cri-ms-p50")
	b.ReportMetric(ms(r[1]), "cri-ms-p99")
	b.ReportMetric(ms(a[0])/ms(r[0]), "ratio-p50")
	b.ReportMetric(ms(a[1])/ms(r[1]), "ratio-p99")
}

// rawTwoContainerStart starts a two-container pod named name with the bare
// CRI calls, returns how long they took and removes the pod.
func rawTwoContainerStart(b *testing.B, env testEnv, rs criapi.RuntimeService, name string) time.Duration {
	ctx := context.Background()
	sbCfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "bench", Uid: name},
		LogDirectory: b.TempDir(),
		Linux:        &runtimeapi.LinuxPodSandboxConfig{CgroupParent: env.CgroupParent + "/raw" + name},
	}
	start := time.Now()
	sb, err := rs.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []string{"first", "second"} {
		cfg := &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: c},
			Image:    &runtimeapi.ImageSpec{Image: env.Image},
			Command:  []string{"sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"},
			LogPath:  c + ".log",
		}
		id, err := rs.CreateContainer(ctx, sb, cfg, sbCfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := rs.StartContainer(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	d := time.Since(start)
	if err := rs.StopPodSandbox(ctx, sb); err != nil {
		b.Fatal(err)
	}
	if err := rs.RemovePodSandbox(ctx, sb); err != nil {
		b.Fatal(err)
	}
	return d
}

// removeManifest deletes a manifest written by writeManifest.
func (h *agentHarness) removeManifest(name string) {
	h.t.Helper()
	if err := os.Remove(filepath.Join(h.manifests, name)); err != nil {
		h.t.Fatal(err)
	}
}

// pollGone waits, polling every 5ms, until the pod has left /pods.
func (h *agentHarness) pollGone(name string, timeout time.Duration) {
	h.t.Helper()
	full := name + "-" + h.node
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if pods, err := h.pods(); err == nil && !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Name == full }) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatalf("pod %s still in /pods after %s", full, timeout)
}

// waitNoReadySandbox waits, polling every 5ms, until the runtime has no
// ready sandbox of the pod named name.
func waitNoReadySandbox(b *testing.B, rs criapi.RuntimeService, name string, timeout time.Duration) {
	b.Helper()
	filter := &runtimeapi.PodSandboxFilter{
		State:         &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY},
		LabelSelector: map[string]string{"io.kubernetes.pod.name": name},
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if sbs, err := rs.ListPodSandbox(context.Background(), filter); err == nil && len(sbs) == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.Fatalf("pod %s still has a ready sandbox after %s", name, timeout)
}

// quantiles returns the p50 and p99 (nearest rank) of ds.
func quantiles(ds []time.Duration) [2]time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration {
		i := int(q*float64(len(s))+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return [2]time.Duration{at(0.50), at(0.99)}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
