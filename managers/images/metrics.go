package images

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/nodekit/nodekit/internal/promutil"
)

// Values of the reason label, the kubelet's.
const (
	reasonAge   = "age"
	reasonSpace = "space"
)

// metrics are the kubelet's image GC counter and a gauge of the usage the
// last pass saw.
type metrics struct {
	collected *prometheus.CounterVec
	usage     prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	return &metrics{
		collected: promutil.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "image_garbage_collected_total",
			Help: "Total number of images garbage collected by the kubelet, whether through disk usage or image age.",
		}, []string{"reason"})),
		usage: promutil.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "image_filesystem_usage_percent",
			Help: "Usage of the image filesystem, in percent of its capacity, at the last image garbage collection.",
		})),
	}
}
