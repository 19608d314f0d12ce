package stats_test

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus/testutil"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodekit/nodekit/managers/stats"
)

// fixed is a SummaryProvider with one pod of one container.
type fixed struct{}

func (fixed) Summary(context.Context, bool) (*statsapi.Summary, error) {
	cpu, mem := uint64(2e9), uint64(64<<20)
	return &statsapi.Summary{
		Node: statsapi.NodeStats{CPU: &statsapi.CPUStats{UsageCoreNanoSeconds: &cpu}, Memory: &statsapi.MemoryStats{WorkingSetBytes: &mem}},
		Pods: []statsapi.PodStats{{
			PodRef:     statsapi.PodReference{Name: "web", Namespace: "default"},
			CPU:        &statsapi.CPUStats{UsageCoreNanoSeconds: &cpu},
			Containers: []statsapi.ContainerStats{{Name: "app", Memory: &statsapi.MemoryStats{WorkingSetBytes: &mem}}},
		}},
	}, nil
}

// ExampleReadResourceMetrics reads a provider once into the kubelet's
// resource metrics, as /metrics/resource does on each request.
func ExampleReadResourceMetrics() {
	rm := stats.ReadResourceMetrics(context.Background(), fixed{})
	fmt.Println(testutil.CollectAndCount(rm, "node_cpu_usage_seconds_total", "pod_cpu_usage_seconds_total",
		"container_memory_working_set_bytes", "resource_scrape_error"))
	// Output: 4
}
