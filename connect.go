package nodekit

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	criapi "k8s.io/cri-api/pkg/apis"
	criclient "k8s.io/cri-client/pkg"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/runtime/cri"
	"github.com/nodekit/nodekit/runtime/sim"
)

// criServices are the runtime and image services every CRI call goes
// through, instrumented with the kubelet's runtime operation metrics (which
// time the runtime's part of a call). With Config.MaxParallelStarts the
// runtime service is also bounded by cri.LimitStarts, outside the
// instrumentation, and the wait for a start slot goes to its own histogram,
// nodekit_runtime_start_slot_wait_seconds.
type criServices struct {
	rs criapi.RuntimeService
	is criapi.ImageManagerService
}

// connectCRI dials the CRI runtime and image services, or creates the
// simulated runtime when Config.Runtime is "sim". An endpoint that does not
// answer fails start-up with an error naming it.
func connectCRI(cfg Config, clk clock.WithTicker, reg prometheus.Registerer, log logr.Logger) (criServices, error) {
	if cfg.Runtime == RuntimeSim {
		log.Info("Using the SIMULATED runtime: no containers run", "runtime", sim.RuntimeName, "version", sim.RuntimeVersion)
		s := sim.New(clk, log, cfg.Sim)
		rs, is := cri.Instrument(s, s, clk, reg)
		return criServices{rs: cri.LimitStarts(rs, cfg.MaxParallelStarts, clk, reg, log.WithName("runtime")), is: is}, nil
	}
	ctx, cancel := context.WithTimeout(klog.NewContext(context.Background(), log.WithName("cri-client")), 30*time.Second)
	defer cancel()
	rs, err := criclient.NewRemoteRuntimeServiceBuilder().
		WithEndpoint(cfg.RuntimeEndpoint).
		WithConnectionTimeout(cfg.RuntimeRequestTimeout).
		WithTracerProvider(nil).
		Build(ctx)
	if err != nil {
		return criServices{}, fmt.Errorf("connect to container runtime at %s: %w", cfg.RuntimeEndpoint, err)
	}
	is, err := criclient.NewRemoteImageServiceBuilder().
		WithEndpoint(cfg.ImageEndpoint).
		WithConnectionTimeout(cfg.RuntimeRequestTimeout).
		WithTracerProvider(nil).
		Build(ctx)
	if err != nil {
		return criServices{}, fmt.Errorf("connect to image service at %s: %w", cfg.ImageEndpoint, err)
	}
	rs, is = cri.Instrument(rs, is, clk, reg)
	return criServices{rs: cri.LimitStarts(rs, cfg.MaxParallelStarts, clk, reg, log.WithName("runtime")), is: is}, nil
}
