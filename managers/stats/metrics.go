package stats

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The kubelet's resource metrics (its /metrics/resource endpoint), with its
// names, labels and help texts (including the stability prefix its metrics
// framework writes).
var (
	nodeCPUDesc = prometheus.NewDesc("node_cpu_usage_seconds_total",
		"[STABLE] Cumulative cpu time consumed by the node in core-seconds", nil, nil)
	nodeMemoryDesc = prometheus.NewDesc("node_memory_working_set_bytes",
		"[STABLE] Current working set of the node in bytes", nil, nil)
	nodeSwapDesc = prometheus.NewDesc("node_swap_usage_bytes",
		"[ALPHA] Current swap usage of the node in bytes. Reported only on non-windows systems", nil, nil)
	containerCPUDesc = prometheus.NewDesc("container_cpu_usage_seconds_total",
		"[STABLE] Cumulative cpu time consumed by the container in core-seconds", []string{"container", "pod", "namespace"}, nil)
	containerMemoryDesc = prometheus.NewDesc("container_memory_working_set_bytes",
		"[STABLE] Current working set of the container in bytes", []string{"container", "pod", "namespace"}, nil)
	containerSwapDesc = prometheus.NewDesc("container_swap_usage_bytes",
		"[ALPHA] Current amount of the container swap usage in bytes. Reported only on non-windows systems", []string{"container", "pod", "namespace"}, nil)
	containerStartDesc = prometheus.NewDesc("container_start_time_seconds",
		"[STABLE] Start time of the container since unix epoch in seconds", []string{"container", "pod", "namespace"}, nil)
	podCPUDesc = prometheus.NewDesc("pod_cpu_usage_seconds_total",
		"[STABLE] Cumulative cpu time consumed by the pod in core-seconds", []string{"pod", "namespace"}, nil)
	podMemoryDesc = prometheus.NewDesc("pod_memory_working_set_bytes",
		"[STABLE] Current working set of the pod in bytes", []string{"pod", "namespace"}, nil)
	podSwapDesc = prometheus.NewDesc("pod_swap_usage_bytes",
		"[ALPHA] Current amount of the pod swap usage in bytes. Reported only on non-windows systems", []string{"pod", "namespace"}, nil)
	scrapeErrorDesc = prometheus.NewDesc("scrape_error",
		"[ALPHA] (Deprecated since 1.29.0) 1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
	resourceScrapeErrorDesc = prometheus.NewDesc("resource_scrape_error",
		"[STABLE] 1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
)

var resourceDescs = []*prometheus.Desc{
	nodeCPUDesc, nodeMemoryDesc, nodeSwapDesc, containerCPUDesc, containerMemoryDesc, containerSwapDesc,
	containerStartDesc, podCPUDesc, podMemoryDesc, podSwapDesc, scrapeErrorDesc, resourceScrapeErrorDesc,
}

// ResourceMetrics is one reading of the kubelet's resource metrics, as a
// prometheus.Collector to register on a registry of its own (the server
// makes one per /metrics/resource request). Each sample carries the time
// of its reading, as the kubelet's do; metrics-server relies on them.
type ResourceMetrics struct {
	metrics []prometheus.Metric
}

var _ prometheus.Collector = (*ResourceMetrics)(nil)

// ReadResourceMetrics reads p's CPU-and-memory summary once. An error
// reading it is not returned: it becomes scrape_error and
// resource_scrape_error 1 with no other samples, as in the kubelet.
func ReadResourceMetrics(ctx context.Context, p SummaryProvider) *ResourceMetrics {
	rm := &ResourceMetrics{}
	s, err := p.Summary(ctx, true)
	failed := 0.0
	if err != nil {
		failed = 1
	} else {
		rm.add(s)
	}
	rm.metrics = append(rm.metrics,
		prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, failed),
		prometheus.MustNewConstMetric(resourceScrapeErrorDesc, prometheus.GaugeValue, failed))
	return rm
}

// Describe implements prometheus.Collector.
func (rm *ResourceMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range resourceDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (rm *ResourceMetrics) Collect(ch chan<- prometheus.Metric) {
	for _, m := range rm.metrics {
		ch <- m
	}
}

func (rm *ResourceMetrics) add(s *statsapi.Summary) {
	rm.cpu(nodeCPUDesc, s.Node.CPU)
	rm.memory(nodeMemoryDesc, s.Node.Memory)
	rm.swap(nodeSwapDesc, s.Node.Swap)
	for _, pod := range s.Pods {
		for _, c := range pod.Containers {
			labels := []string{c.Name, pod.PodRef.Name, pod.PodRef.Namespace}
			if c.StartTime.Unix() > 0 {
				rm.sample(containerStartDesc, prometheus.GaugeValue, c.StartTime.Time,
					float64(c.StartTime.UnixNano())/float64(time.Second), labels...)
			}
			rm.cpu(containerCPUDesc, c.CPU, labels...)
			rm.memory(containerMemoryDesc, c.Memory, labels...)
			rm.swap(containerSwapDesc, c.Swap, labels...)
		}
		labels := []string{pod.PodRef.Name, pod.PodRef.Namespace}
		rm.cpu(podCPUDesc, pod.CPU, labels...)
		rm.memory(podMemoryDesc, pod.Memory, labels...)
		rm.swap(podSwapDesc, pod.Swap, labels...)
	}
}

func (rm *ResourceMetrics) cpu(d *prometheus.Desc, s *statsapi.CPUStats, labels ...string) {
	if s == nil || s.UsageCoreNanoSeconds == nil {
		return
	}
	rm.sample(d, prometheus.CounterValue, s.Time.Time, float64(*s.UsageCoreNanoSeconds)/float64(time.Second), labels...)
}

func (rm *ResourceMetrics) memory(d *prometheus.Desc, s *statsapi.MemoryStats, labels ...string) {
	if s == nil || s.WorkingSetBytes == nil {
		return
	}
	rm.sample(d, prometheus.GaugeValue, s.Time.Time, float64(*s.WorkingSetBytes), labels...)
}

func (rm *ResourceMetrics) swap(d *prometheus.Desc, s *statsapi.SwapStats, labels ...string) {
	if s == nil || s.SwapUsageBytes == nil {
		return
	}
	rm.sample(d, prometheus.GaugeValue, s.Time.Time, float64(*s.SwapUsageBytes), labels...)
}

func (rm *ResourceMetrics) sample(d *prometheus.Desc, t prometheus.ValueType, at time.Time, v float64, labels ...string) {
	m, err := prometheus.NewConstMetric(d, t, v, labels...)
	if err != nil {
		return
	}
	rm.metrics = append(rm.metrics, prometheus.NewMetricWithTimestamp(at, m))
}
