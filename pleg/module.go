package pleg

import (
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	criapi "k8s.io/cri-api/pkg/apis"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Module provides the pod status *Cache and, as Interface, the PLEG that
// Config.Kind names: Generic by default, Evented for "evented". It needs a
// noderuntime.Runtime, a clock.Clock, a clock.WithTicker, a logr.Logger, a
// prometheus.Registerer and a Config, and for the evented PLEG a
// criapi.RuntimeService (the event source); the Runtime is the evented
// PLEG's EventDecoder when it implements it (runtime/cri's Manager does).
// It registers no lifecycle hooks: the agent runs the Interface it is given.
var Module = fx.Module("pleg",
	fx.Provide(
		NewCache,
		fx.Annotate(fromGraph, fx.ParamTags(`optional:"true"`)),
	),
)

// fromGraph adapts New to the values an application provides.
func fromGraph(rs criapi.RuntimeService, rt noderuntime.Runtime, cache *Cache, clk clock.WithTicker, reg prometheus.Registerer, log logr.Logger, cfg Config) (Interface, error) {
	var src EventSource
	if rs != nil {
		src = rs
	}
	return New(src, rt, cache, clk, reg, log, cfg)
}

// New returns the PLEG cfg.Kind names: NewGeneric over rt, or NewEvented
// reading events from src, with rt as its EventDecoder when rt implements
// it. src is needed only for the evented PLEG. It does no I/O.
func New(src EventSource, rt noderuntime.Runtime, cache *Cache, clk clock.WithTicker, reg prometheus.Registerer, log logr.Logger, cfg Config) (Interface, error) {
	switch k := cfg.withDefaults().Kind; k {
	case KindGeneric:
		return NewGeneric(rt, cache, clk, reg, log, cfg), nil
	case KindEvented:
		if src == nil {
			return nil, errors.New("pleg: the evented PLEG needs a CRI runtime service to read container events from")
		}
		dec, _ := rt.(EventDecoder)
		return NewEvented(src, rt, dec, cache, clk, reg, log, cfg), nil
	default:
		return nil, fmt.Errorf("pleg: kind %q: want %q or %q", k, KindGeneric, KindEvented)
	}
}
