package stats

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

type summaryFunc func(ctx context.Context, only bool) (*statsapi.Summary, error)

func (f summaryFunc) Summary(ctx context.Context, only bool) (*statsapi.Summary, error) {
	return f(ctx, only)
}

func TestResourceMetricsHaveTheKubeletsNamesLabelsAndTimes(t *testing.T) {
	t.Parallel()
	at := metav1.NewTime(time.Unix(1800000000, 0))
	start := metav1.NewTime(time.Unix(1700000000, 500e6))
	cpu := func(n uint64) *statsapi.CPUStats { return &statsapi.CPUStats{Time: at, UsageCoreNanoSeconds: &n} }
	mem := func(n uint64) *statsapi.MemoryStats { return &statsapi.MemoryStats{Time: at, WorkingSetBytes: &n} }
	var asked []bool
	p := summaryFunc(func(_ context.Context, only bool) (*statsapi.Summary, error) {
		asked = append(asked, only)
		return &statsapi.Summary{
			Node: statsapi.NodeStats{CPU: cpu(2e9), Memory: mem(4096)},
			Pods: []statsapi.PodStats{{
				PodRef: statsapi.PodReference{Name: "web", Namespace: "ns"},
				CPU:    cpu(15e8), Memory: mem(2048),
				Containers: []statsapi.ContainerStats{
					{Name: "app", StartTime: start, CPU: cpu(1e9), Memory: mem(1024)},
					{Name: "starting"}, // no readings yet: only what it has
				},
			}},
		}, nil
	})
	want := `
# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="app",namespace="ns",pod="web"} 1 1800000000000
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="app",namespace="ns",pod="web"} 1024 1800000000000
# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="app",namespace="ns",pod="web"} 1.7000000005e+09 1700000000500
# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 2 1800000000000
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 4096 1800000000000
# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in core-seconds
# TYPE pod_cpu_usage_seconds_total counter
pod_cpu_usage_seconds_total{namespace="ns",pod="web"} 1.5 1800000000000
# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes
# TYPE pod_memory_working_set_bytes gauge
pod_memory_working_set_bytes{namespace="ns",pod="web"} 2048 1800000000000
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
# HELP scrape_error [ALPHA] (Deprecated since 1.29.0) 1 if there was an error while getting container metrics, 0 otherwise
# TYPE scrape_error gauge
scrape_error 0
`
	if err := testutil.CollectAndCompare(ReadResourceMetrics(context.Background(), p), strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if len(asked) != 1 || !asked[0] {
		t.Errorf("summary asked %v, want once with only CPU and memory", asked)
	}
}

func TestResourceMetricsReportAFailedScrape(t *testing.T) {
	t.Parallel()
	p := summaryFunc(func(context.Context, bool) (*statsapi.Summary, error) { return nil, errors.New("runtime down") })
	want := `
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 1
# HELP scrape_error [ALPHA] (Deprecated since 1.29.0) 1 if there was an error while getting container metrics, 0 otherwise
# TYPE scrape_error gauge
scrape_error 1
`
	if err := testutil.CollectAndCompare(ReadResourceMetrics(context.Background(), p), strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
