package pleg

import "go.uber.org/fx"

// Module provides the pod status *Cache and the generic PLEG as Interface.
// It needs a noderuntime.Runtime, a clock.Clock, a clock.WithTicker, a
// logr.Logger and a Config. It registers no lifecycle hooks: the agent runs
// the Interface it is given.
var Module = fx.Module("pleg",
	fx.Provide(
		NewCache,
		fx.Annotate(NewGeneric, fx.As(new(Interface))),
	),
)
