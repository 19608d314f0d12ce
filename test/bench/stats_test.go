package bench

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/internal/simharness"
	"github.com/nodekit/nodekit/managers/stats"
	"github.com/nodekit/nodekit/server"
	"github.com/nodekit/nodekit/sources"
)

// statsPipeline starts n running pods and returns the pipeline and a stats
// provider over its simulated runtime, limited to the agent's pods.
func statsPipeline(b *testing.B, n int) (*running, *stats.CRI) {
	b.Helper()
	r := startPipeline(b, n+1)
	pods := make([]*corev1.Pod, n)
	uids := make([]types.UID, n)
	for j := range pods {
		pods[j] = benchPod(j)
		uids[j] = pods[j].UID
	}
	r.Send(sources.ADD, pods...)
	r.waitRunning(b, uids, 5*time.Minute)
	p := stats.NewCRI(r.Sim, r.Sim, clock.RealClock{}, logr.Discard(),
		stats.Config{InstanceID: simharness.DefaultNodeName, RootDir: b.TempDir()})
	return r, p
}

// BenchmarkStatsSummary measures one /stats/summary for 100 running pods
// on the simulated runtime: the full summary (node figures from this host,
// pod and container figures over CRI from the simulated runtime, JSON
// encoding), the CPU-and-memory-only one, and /metrics/resource (what
// metrics-server scrapes), each through the server's handler. The agent is
// stopped so that its own loops do not share the CPU with the measured
// calls; cpu-µs/op is the process's CPU time per call.
func BenchmarkStatsSummary(b *testing.B) {
	r, p := statsPipeline(b, 100)
	r.stop()
	s := server.New(nil, nil, nil, logr.Discard(), server.Config{})
	s.ServeStats(p)
	for _, tc := range []struct{ name, path string }{
		{"summary", "/stats/summary"},
		{"summary-cpu-memory", "/stats/summary?only_cpu_and_memory=true"},
		{"metrics-resource", "/metrics/resource"},
	} {
		path := tc.path
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			before := cpuTime(b)
			for i := 0; i < b.N; i++ {
				rec := httptest.NewRecorder()
				s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
				}
				if i == 0 {
					b.ReportMetric(float64(rec.Body.Len()), "bytes/response")
				}
			}
			// The machine is shared: CPU per call is steadier than wall time.
			b.ReportMetric(float64((cpuTime(b)-before).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// steadyWindow is how long each arm of BenchmarkSteadyCPUWithStats runs.
const steadyWindow = 60 * time.Second

// BenchmarkSteadyCPUWithStats measures the process's CPU (user + system,
// getrusage) over a minute of a steady agent with 100 running pods on the
// simulated runtime, without stats and with /metrics/resource scraped
// every 15 s over HTTP, as metrics-server does. Each iteration is one
// minute; run with -benchtime 1x. Reported as CPU-ms per minute.
func BenchmarkSteadyCPUWithStats(b *testing.B) {
	if testing.Short() {
		b.Skip("takes two minutes")
	}
	for _, scrape := range []bool{false, true} {
		b.Run(fmt.Sprintf("scrape=%v", scrape), func(b *testing.B) {
			r, p := statsPipeline(b, 100)
			s := server.New(nil, nil, nil, logr.Discard(), server.Config{})
			s.ServeStats(p)
			srv := httptest.NewServer(s.Handler())
			defer srv.Close()
			time.Sleep(5 * time.Second) // let the start-up work settle
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				before := cpuTime(b)
				end := time.Now().Add(steadyWindow)
				for time.Now().Before(end) {
					if scrape {
						get(b, srv.URL+"/metrics/resource")
					}
					time.Sleep(min(15*time.Second, time.Until(end)))
				}
				b.ReportMetric(float64((cpuTime(b)-before).Milliseconds())/steadyWindow.Minutes(), "cpu-ms/min")
			}
			b.StopTimer()
			r.stop()
		})
	}
}

func get(b *testing.B, url string) {
	b.Helper()
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
