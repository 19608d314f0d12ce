package prober

import "go.uber.org/fx"

// Module provides the default Prober as Manager and as ResultsProvider (one
// instance). It needs an ExecRunner (CRIExec for a CRI runtime), a
// clock.WithTicker, a prometheus.Registerer, an EventRecorder (LogRecorder
// without an API server), a logr.Logger and a Config. It registers no
// lifecycle hooks: the agent runs the Manager it is given.
var Module = fx.Module("prober",
	fx.Provide(
		fx.Annotate(New, fx.As(new(Manager)), fx.As(new(ResultsProvider))),
	),
)
