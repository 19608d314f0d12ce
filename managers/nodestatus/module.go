package nodestatus

import "go.uber.org/fx"

// Module provides the Reporter as Manager and HostMachine as MachineInfo. It
// needs a kubernetes.Interface (the node's own credentials suffice), a
// RuntimeInfo (noderuntime.Runtime satisfies it), a HealthSource, a
// clock.WithTicker, a logr.Logger and a Config. It registers no lifecycle
// hooks: whoever holds the Manager runs it.
var Module = fx.Module("nodestatus",
	fx.Provide(
		fx.Annotate(New, fx.As(new(Manager))),
		fx.Annotate(NewHostMachine, fx.As(new(MachineInfo))),
	),
)
