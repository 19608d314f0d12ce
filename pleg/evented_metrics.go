package pleg

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/nodekit/nodekit/internal/promutil"
)

// eventedMetrics are the evented PLEG's own metrics: the kubelet's three
// evented_pleg ones, and nodekit's.
type eventedMetrics struct {
	connections prometheus.Counter
	connErrors  prometheus.Counter
	latency     prometheus.Histogram
	received    prometheus.Counter
	missed      prometheus.Counter
	reconnects  prometheus.Counter
	inspections prometheus.Counter
	relists     *prometheus.CounterVec
	mode        *prometheus.GaugeVec
}

func newEventedMetrics(reg prometheus.Registerer) *eventedMetrics {
	return &eventedMetrics{
		connections: promutil.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "evented_pleg_connection_success_count",
			Help: "The number of times a streaming client was obtained to receive CRI Events."})),
		connErrors: promutil.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "evented_pleg_connection_error_count",
			Help: "The number of errors encountered during the establishment of streaming connection with the CRI runtime."})),
		latency: promutil.Register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "evented_pleg_connection_latency_seconds",
			Help:    "The latency of streaming connection with the CRI runtime, measured in seconds: from an event's creation in the runtime to the pod status cache holding it.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)})),
		received: promutil.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "nodekit", Subsystem: "evented_pleg", Name: "events_total",
			Help: "Container events received from the CRI event stream, including other clients' containers."})),
		missed: promutil.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "nodekit", Subsystem: "evented_pleg", Name: "missed_events_total",
			Help: "Changes a relist found that the event stream, open all along, did not report; it should stay 0."})),
		reconnects: promutil.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "nodekit", Subsystem: "evented_pleg", Name: "reconnects_total",
			Help: "Times the event stream was opened again after it had been open."})),
		inspections: promutil.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "nodekit", Subsystem: "evented_pleg", Name: "inspections_total",
			Help: "GetPodStatus calls made by the evented PLEG."})),
		relists: promutil.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "nodekit", Subsystem: "evented_pleg", Name: "relists_total",
			Help: "Relists by the evented PLEG, by reason (initial, resync, reconcile, waiters, fallback, manual)."},
			[]string{"reason"})),
		mode: promutil.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "nodekit", Subsystem: "evented_pleg", Name: "mode",
			Help: "1 for the mode driving the evented PLEG (events, or relisting after the stream failed), 0 for the other."},
			[]string{"mode"})),
	}
}

// setMode sets the mode gauge.
func (m *eventedMetrics) setMode(mode Mode) {
	for _, x := range []Mode{ModeEvents, ModeRelisting} {
		v := 0.0
		if x == mode {
			v = 1
		}
		m.mode.WithLabelValues(string(x)).Set(v)
	}
}
