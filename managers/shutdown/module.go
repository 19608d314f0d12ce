package shutdown

import (
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Params are the manager's dependencies under fx.
type Params struct {
	fx.In

	Pods    PodLister
	Killer  PodKiller
	Trigger Trigger
	Events  noderuntime.EventRecorder
	Clock   clock.WithTicker
	// Registry takes the graceful shutdown gauges; optional.
	Registry prometheus.Registerer `optional:"true"`
	Log      logr.Logger
	Config   Config
}

// New builds the Default manager from fx parameters; it does no I/O.
func New(p Params) (*Default, error) {
	return NewDefault(p.Pods, p.Killer, p.Trigger, p.Events, p.Clock, p.Registry, p.Log, p.Config)
}

// Module provides the shutdown manager as Manager and Logind as the
// Trigger (replace it with fx.Decorate or fx.Replace). It does not run
// the manager: the agent runs it with the other subsystems.
var Module = fx.Module("shutdown",
	fx.Provide(
		fx.Annotate(New, fx.As(new(Manager))),
		fx.Annotate(NewLogind, fx.As(new(Trigger))),
	),
)
