package podworkers

import "go.uber.org/fx"

// Module provides the default Workers (a *PodWorkers) and the *WorkQueue it
// fills. It needs a SyncHandler, a StatusCache, a clock.Clock, a
// clock.WithTicker, a logr.Logger and a Config.
var Module = fx.Module("podworkers",
	fx.Provide(
		NewWorkQueue,
		fx.Annotate(New, fx.As(new(Workers))),
	),
)
