package cri

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/internal/promutil"
)

// opMetrics are the kubelet's runtime operation metrics.
type opMetrics struct {
	total    *prometheus.CounterVec
	errors   *prometheus.CounterVec
	duration *prometheus.HistogramVec
	clk      clock.PassiveClock
}

func newOpMetrics(reg prometheus.Registerer, clk clock.PassiveClock) *opMetrics {
	label := []string{"operation_type"}
	return &opMetrics{
		clk: clk,
		total: promutil.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "runtime_operations_total",
			Help: "Cumulative number of runtime operations by operation type."}, label)),
		errors: promutil.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "runtime_operations_errors_total",
			Help: "Cumulative number of runtime operation errors by operation type."}, label)),
		duration: promutil.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "runtime_operations_duration_seconds",
			Help:    "Duration in seconds of runtime operations. Broken down by operation type.",
			Buckets: prometheus.ExponentialBuckets(.005, 2.5, 14)}, label)),
	}
}

// record observes one operation that started at start and ended with err.
func (m *opMetrics) record(op string, start time.Time, err error) {
	m.total.WithLabelValues(op).Inc()
	m.duration.WithLabelValues(op).Observe(m.clk.Since(start).Seconds())
	if err != nil {
		m.errors.WithLabelValues(op).Inc()
	}
}

// Instrument wraps a CRI runtime and image service so that every call nodekit
// makes is counted and timed in kubelet_runtime_operations_total,
// _errors_total and _duration_seconds on reg, with the kubelet's operation
// names. Calls nodekit does not make pass through uncounted.
func Instrument(rs criapi.RuntimeService, is criapi.ImageManagerService, clk clock.PassiveClock, reg prometheus.Registerer) (criapi.RuntimeService, criapi.ImageManagerService) {
	m := newOpMetrics(reg, clk)
	return &instrumentedRuntime{RuntimeService: rs, m: m}, &instrumentedImages{ImageManagerService: is, m: m}
}

type instrumentedRuntime struct {
	criapi.RuntimeService
	m *opMetrics
}

func (r *instrumentedRuntime) Version(ctx context.Context, v string) (resp *runtimeapi.VersionResponse, err error) {
	defer func(start time.Time) { r.m.record("version", start, err) }(r.m.clk.Now())
	return r.RuntimeService.Version(ctx, v)
}

func (r *instrumentedRuntime) Status(ctx context.Context, verbose bool) (resp *runtimeapi.StatusResponse, err error) {
	defer func(start time.Time) { r.m.record("status", start, err) }(r.m.clk.Now())
	return r.RuntimeService.Status(ctx, verbose)
}

func (r *instrumentedRuntime) RunPodSandbox(ctx context.Context, c *runtimeapi.PodSandboxConfig, handler string) (id string, err error) {
	defer func(start time.Time) { r.m.record("run_podsandbox", start, err) }(r.m.clk.Now())
	return r.RuntimeService.RunPodSandbox(ctx, c, handler)
}

func (r *instrumentedRuntime) StopPodSandbox(ctx context.Context, id string) (err error) {
	defer func(start time.Time) { r.m.record("stop_podsandbox", start, err) }(r.m.clk.Now())
	return r.RuntimeService.StopPodSandbox(ctx, id)
}

func (r *instrumentedRuntime) RemovePodSandbox(ctx context.Context, id string) (err error) {
	defer func(start time.Time) { r.m.record("remove_podsandbox", start, err) }(r.m.clk.Now())
	return r.RuntimeService.RemovePodSandbox(ctx, id)
}

func (r *instrumentedRuntime) PodSandboxStatus(ctx context.Context, id string, verbose bool) (resp *runtimeapi.PodSandboxStatusResponse, err error) {
	defer func(start time.Time) { r.m.record("podsandbox_status", start, err) }(r.m.clk.Now())
	return r.RuntimeService.PodSandboxStatus(ctx, id, verbose)
}

func (r *instrumentedRuntime) ListPodSandbox(ctx context.Context, f *runtimeapi.PodSandboxFilter) (out []*runtimeapi.PodSandbox, err error) {
	defer func(start time.Time) { r.m.record("list_podsandbox", start, err) }(r.m.clk.Now())
	return r.RuntimeService.ListPodSandbox(ctx, f)
}

func (r *instrumentedRuntime) CreateContainer(ctx context.Context, sb string, c *runtimeapi.ContainerConfig, sc *runtimeapi.PodSandboxConfig) (id string, err error) {
	defer func(start time.Time) { r.m.record("create_container", start, err) }(r.m.clk.Now())
	return r.RuntimeService.CreateContainer(ctx, sb, c, sc)
}

func (r *instrumentedRuntime) StartContainer(ctx context.Context, id string) (err error) {
	defer func(start time.Time) { r.m.record("start_container", start, err) }(r.m.clk.Now())
	return r.RuntimeService.StartContainer(ctx, id)
}

func (r *instrumentedRuntime) StopContainer(ctx context.Context, id string, timeout int64) (err error) {
	defer func(start time.Time) { r.m.record("stop_container", start, err) }(r.m.clk.Now())
	return r.RuntimeService.StopContainer(ctx, id, timeout)
}

func (r *instrumentedRuntime) RemoveContainer(ctx context.Context, id string) (err error) {
	defer func(start time.Time) { r.m.record("remove_container", start, err) }(r.m.clk.Now())
	return r.RuntimeService.RemoveContainer(ctx, id)
}

func (r *instrumentedRuntime) ListContainers(ctx context.Context, f *runtimeapi.ContainerFilter) (out []*runtimeapi.Container, err error) {
	defer func(start time.Time) { r.m.record("list_containers", start, err) }(r.m.clk.Now())
	return r.RuntimeService.ListContainers(ctx, f)
}

func (r *instrumentedRuntime) ContainerStatus(ctx context.Context, id string, verbose bool) (resp *runtimeapi.ContainerStatusResponse, err error) {
	defer func(start time.Time) { r.m.record("container_status", start, err) }(r.m.clk.Now())
	return r.RuntimeService.ContainerStatus(ctx, id, verbose)
}

func (r *instrumentedRuntime) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (stdout, stderr []byte, err error) {
	defer func(start time.Time) { r.m.record("exec_sync", start, err) }(r.m.clk.Now())
	return r.RuntimeService.ExecSync(ctx, id, cmd, timeout)
}

type instrumentedImages struct {
	criapi.ImageManagerService
	m *opMetrics
}

func (i *instrumentedImages) ListImages(ctx context.Context, f *runtimeapi.ImageFilter) (out []*runtimeapi.Image, err error) {
	defer func(start time.Time) { i.m.record("list_images", start, err) }(i.m.clk.Now())
	return i.ImageManagerService.ListImages(ctx, f)
}

func (i *instrumentedImages) ImageStatus(ctx context.Context, img *runtimeapi.ImageSpec, verbose bool) (resp *runtimeapi.ImageStatusResponse, err error) {
	defer func(start time.Time) { i.m.record("image_status", start, err) }(i.m.clk.Now())
	return i.ImageManagerService.ImageStatus(ctx, img, verbose)
}

func (i *instrumentedImages) PullImage(ctx context.Context, img *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, sc *runtimeapi.PodSandboxConfig) (ref string, err error) {
	defer func(start time.Time) { i.m.record("pull_image", start, err) }(i.m.clk.Now())
	return i.ImageManagerService.PullImage(ctx, img, auth, sc)
}

func (i *instrumentedImages) RemoveImage(ctx context.Context, img *runtimeapi.ImageSpec) (err error) {
	defer func(start time.Time) { i.m.record("remove_image", start, err) }(i.m.clk.Now())
	return i.ImageManagerService.RemoveImage(ctx, img)
}
