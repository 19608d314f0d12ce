package podworkers

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/nodekit/nodekit/internal/promutil"
)

// newWorkerDuration returns the kubelet's kubelet_pod_worker_duration_seconds:
// how long one sync of one pod took, by operation (create, update, sync,
// kill).
func newWorkerDuration(reg prometheus.Registerer) *prometheus.HistogramVec {
	return promutil.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: "kubelet", Name: "pod_worker_duration_seconds",
		Help:    "Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync",
		Buckets: prometheus.DefBuckets,
	}, []string{"operation_type"}))
}
