package prober

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/internal/promutil"
)

// Metric label values of results, the kubelet's.
const (
	resultSuccessful = "successful"
	resultFailed     = "failed"
	resultUnknown    = "unknown"
)

// metrics are the kubelet prober's, with its names and labels.
type metrics struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	return &metrics{
		total: promutil.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "prober", Name: "probe_total",
			Help: "Cumulative number of a liveness, readiness or startup probe for a container by result.",
		}, []string{"probe_type", "result", "container", "pod", "namespace", "pod_uid"})),
		duration: promutil.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "prober", Name: "probe_duration_seconds",
			Help:    "Duration in seconds for a probe response.",
			Buckets: prometheus.DefBuckets,
		}, []string{"probe_type", "container", "pod", "namespace"})),
	}
}

// workerMetrics are one worker's series, resolved once.
type workerMetrics struct {
	m                           *metrics
	labels                      []string // probe_type, container, pod, namespace, pod_uid
	successful, failed, unknown prometheus.Counter
	duration                    prometheus.Observer
}

func (m *metrics) forWorker(t ProbeType, pod *corev1.Pod, container string) workerMetrics {
	typ, ns, uid := t.String(), pod.Namespace, string(pod.UID)
	return workerMetrics{
		m:          m,
		labels:     []string{typ, container, pod.Name, ns, uid},
		successful: m.total.WithLabelValues(typ, resultSuccessful, container, pod.Name, ns, uid),
		failed:     m.total.WithLabelValues(typ, resultFailed, container, pod.Name, ns, uid),
		unknown:    m.total.WithLabelValues(typ, resultUnknown, container, pod.Name, ns, uid),
		duration:   m.duration.WithLabelValues(typ, container, pod.Name, ns),
	}
}

// observe counts one probe result; as the kubelet, the duration of failed
// probes (often timeouts) is not observed.
func (w workerMetrics) observe(r Result, d time.Duration) {
	switch r {
	case Success:
		w.successful.Inc()
		w.duration.Observe(d.Seconds())
	case Failure:
		w.failed.Inc()
	default:
		w.unknown.Inc()
		w.duration.Observe(d.Seconds())
	}
}

// delete drops the worker's series.
func (w workerMetrics) delete() {
	typ, container, pod, ns, uid := w.labels[0], w.labels[1], w.labels[2], w.labels[3], w.labels[4]
	for _, r := range [...]string{resultSuccessful, resultFailed, resultUnknown} {
		w.m.total.DeleteLabelValues(typ, r, container, pod, ns, uid)
	}
	w.m.duration.DeleteLabelValues(typ, container, pod, ns)
}
