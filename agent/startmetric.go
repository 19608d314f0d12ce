package agent

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/internal/promutil"
	"github.com/nodekit/nodekit/sources"
)

// newPodStartDuration returns the kubelet's kubelet_pod_start_duration_seconds.
func newPodStartDuration(reg prometheus.Registerer) prometheus.Histogram {
	return promutil.Register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
		Subsystem: "kubelet", Name: "pod_start_duration_seconds",
		Help: "Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run",
		Buckets: []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600,
			900, 1200, 1800, 2700, 3600},
	}))
}

// WithMetrics makes the Syncer record kubelet_pod_start_duration_seconds on
// reg.
func WithMetrics(reg prometheus.Registerer) SyncerOption {
	return func(s *Syncer) { s.startDuration = newPodStartDuration(reg) }
}

// setStatus records a pod's status and, the first time the pod is Running,
// how long it took from the pod being seen (its config.seen annotation, or
// its first sync) to running.
func (s *Syncer) setStatus(pod *corev1.Pod, st *corev1.PodStatus) {
	if s.startDuration != nil && st.Phase == corev1.PodRunning {
		if seen, ok := s.firstRun(pod); ok {
			s.startDuration.Observe(s.clk.Since(seen).Seconds())
		}
	}
	s.statuses.SetPodStatus(pod, st)
}

// firstRun returns when the pod was first seen if it has not been reported
// running before; it remembers that it now has.
func (s *Syncer) firstRun(pod *corev1.Pod) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ran[pod.UID] {
		return time.Time{}, false
	}
	s.ran[pod.UID] = true
	if t, err := time.Parse(time.RFC3339Nano, pod.Annotations[sources.AnnotationSeen]); err == nil {
		return t, true
	}
	if t, ok := s.firstSync[pod.UID]; ok {
		return t, true
	}
	return time.Time{}, false
}

// noteSync remembers a pod's first sync, for pods without config.seen.
func (s *Syncer) noteSync(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.firstSync[uid]; !ok {
		s.firstSync[uid] = s.clk.Now()
	}
}
