//go:build unix

package prober

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// cpuTime returns the CPU time (user + system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchProbes runs b.N probes of one worker (doProbe: status lookup,
// gating, the probe, metrics, thresholds) and reports the process CPU time
// per probe next to the wall time, and the CPU milliseconds per second
// that 1,000 probes per second cost.
func benchProbes(b *testing.B, probe *corev1.Probe, ports []corev1.ContainerPort) {
	e := newEnv(b, Config{})
	pod := newPod(corev1.Container{Name: "app", LivenessProbe: probe, Ports: ports})
	e.p.AddPod(pod)
	e.p.UpdatePodStatus(pod, podStatus(running("app", ctrID, epoch)))
	w := e.worker(b, "app", Liveness)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime(b)
	for b.Loop() {
		w.doProbe(ctx)
	}
	used := cpuTime(b) - cpu
	b.StopTimer()
	perProbe := float64(used.Nanoseconds()) / float64(b.N)
	b.ReportMetric(perProbe, "cpu-ns/probe")
	b.ReportMetric(perProbe*1000/1e6, "cpu-ms/s@1000probes/s")
	if r, _ := e.p.Liveness().Get(ctrID); r != Success {
		b.Fatalf("liveness %v, want Success", r)
	}
	e.p.http.CloseIdleConnections()
}

// BenchmarkProbes measures the CPU cost of single probes: exec through a
// fake runtime that answers at once (the Prober's own cost), and HTTP, TCP
// and gRPC against real local servers (client and server cost, both in
// this process).
func BenchmarkProbes(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	httpPort := port(b, srv.Listener.Addr())
	grpcPort := benchGRPC(b)
	with := func(h corev1.ProbeHandler) *corev1.Probe {
		return execProbe(func(p *corev1.Probe) { p.ProbeHandler = h })
	}
	b.Run("exec", func(b *testing.B) { benchProbes(b, execProbe(), nil) })
	b.Run("http", func(b *testing.B) {
		benchProbes(b, with(corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("web")}}),
			[]corev1.ContainerPort{{Name: "web", ContainerPort: int32(httpPort)}})
	})
	b.Run("tcp", func(b *testing.B) {
		benchProbes(b, with(corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt(httpPort)}}), nil)
	})
	b.Run("grpc", func(b *testing.B) {
		benchProbes(b, with(corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: int32(grpcPort)}}), nil)
	})
}

// BenchmarkProbes1000Workers runs 1,000 exec liveness workers through Run
// and measures one round: the clock moves one period and every worker
// probes once (goroutine wake-ups, tickers and all).
func BenchmarkProbes1000Workers(b *testing.B) {
	const workers = 1000
	e := newEnv(b, Config{})
	e.clk.Step(time.Hour) // no jitter: all workers tick together
	idle := make(chan struct{}, workers)
	e.p.hook = func(_ probeKey, ev string) {
		if ev == "idle" {
			idle <- struct{}{}
		}
	}
	for i := range workers {
		pod := newPod(corev1.Container{Name: "app", LivenessProbe: execProbe()})
		pod.UID, pod.Name = types.UID(fmt.Sprint("uid-", i)), fmt.Sprint("pod-", i)
		e.p.AddPod(pod)
		e.p.UpdatePodStatus(pod, podStatus(running("app", fmt.Sprint("containerd://", i), epoch)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.p.Run(ctx) }()
	for range workers {
		<-idle
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime(b)
	for b.Loop() {
		e.clk.Step(10 * time.Second)
		for range workers {
			<-idle
		}
	}
	used := cpuTime(b) - cpu
	b.StopTimer()
	perProbe := float64(used.Nanoseconds()) / float64(b.N*workers)
	b.ReportMetric(perProbe, "cpu-ns/probe")
	b.ReportMetric(perProbe*1000/1e6, "cpu-ms/s@1000probes/s")
	cancel()
	<-done
}
