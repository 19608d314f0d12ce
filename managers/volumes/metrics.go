package volumes

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/internal/promutil"
)

// Label values of the kubelet's volume metrics.
const (
	operationMount    = "volume_mount"
	statusSuccess     = "success"
	statusFail        = "fail-unknown"
	stateDesired      = "desired_state_of_world"
	stateActual       = "actual_state_of_world"
	pluginUnsupported = "unsupported"
)

// metrics are the kubelet's volume metrics, with its names and labels.
type metrics struct {
	operations *prometheus.HistogramVec
	volumes    *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	return &metrics{
		operations: promutil.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "storage_operation_duration_seconds",
			Help:    "Storage operation duration",
			Buckets: []float64{.1, .25, .5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600},
		}, []string{"volume_plugin", "operation_name", "status", "migrated"})),
		volumes: promutil.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "volume_manager_total_volumes",
			Help: "Number of volumes in Volume Manager",
		}, []string{"plugin_name", "state"})),
	}
}

// observe records one set-up (or refresh) of a volume.
func (m *metrics) observe(v *corev1.Volume, d time.Duration, err error) {
	status := statusSuccess
	if err != nil {
		status = statusFail
	}
	m.operations.WithLabelValues(pluginName(v), operationMount, status, "false").Observe(d.Seconds())
}

// pluginName is the kubelet's name of a volume's plugin.
func pluginName(v *corev1.Volume) string {
	switch {
	case v.EmptyDir != nil:
		return "kubernetes.io/empty-dir"
	case v.HostPath != nil:
		return "kubernetes.io/host-path"
	case v.ConfigMap != nil:
		return "kubernetes.io/configmap"
	case v.Secret != nil:
		return "kubernetes.io/secret"
	case v.DownwardAPI != nil:
		return "kubernetes.io/downward-api"
	case v.Projected != nil:
		return "kubernetes.io/projected"
	}
	return pluginUnsupported
}

// publishCounts sets volume_manager_total_volumes from the pods' specs
// (desired) and what is set up (actual). The caller holds VolumeManager.mu.
func (m *VolumeManager) publishCounts() {
	desired, actual := map[string]float64{}, map[string]float64{}
	for _, st := range m.pods {
		if st.pod == nil {
			continue
		}
		for i := range st.pod.Spec.Volumes {
			v := &st.pod.Spec.Volumes[i]
			desired[pluginName(v)]++
			if _, ok := st.volumes[v.Name]; ok {
				actual[pluginName(v)]++
			}
		}
	}
	m.metrics.volumes.Reset()
	for p, n := range desired {
		m.metrics.volumes.WithLabelValues(p, stateDesired).Set(n)
		m.metrics.volumes.WithLabelValues(p, stateActual).Set(actual[p])
	}
}
