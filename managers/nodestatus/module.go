package nodestatus

import (
	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/managers/nodeip"
)

// Module provides the Reporter as Manager and HostMachine as MachineInfo. It
// needs a kubernetes.Interface (the node's own credentials suffice), a
// RuntimeInfo (noderuntime.Runtime satisfies it), a HealthSource, a
// clock.WithTicker, a logr.Logger and a Config, and uses a nodeip.Source,
// a PressureSource and a ReadyGate when they are provided (nodekit binds
// the shared node addresses, the eviction manager and the shutdown
// manager to them). It registers no lifecycle hooks: whoever holds the
// Manager runs it.
var Module = fx.Module("nodestatus",
	fx.Provide(
		fx.Annotate(newFromParams, fx.As(new(Manager))),
		fx.Annotate(NewHostMachine, fx.As(new(MachineInfo))),
	),
)

type params struct {
	fx.In

	Client   kubernetes.Interface
	Machine  MachineInfo
	Runtime  RuntimeInfo
	Health   HealthSource
	Clock    clock.WithTicker
	Log      logr.Logger
	Config   Config
	NodeIPs  nodeip.Source  `optional:"true"`
	Pressure PressureSource `optional:"true"`
	Gate     ReadyGate      `optional:"true"`
}

// newFromParams is New with the optional inputs given at construction.
func newFromParams(p params) *Reporter {
	r := New(p.Client, p.Machine, p.Runtime, p.Health, p.Clock, p.Log, p.Config)
	if p.NodeIPs != nil {
		r.nodeIPs = p.NodeIPs
	}
	r.pressure.Store(p.Pressure)
	r.gate.Store(p.Gate)
	return r
}
