package stats

import "go.uber.org/fx"

// Module provides the CRI stats provider as Provider. It needs the CRI
// runtime and image services, a clock.Clock, a logr.Logger and a Config.
var Module = fx.Module("stats",
	fx.Provide(fx.Annotate(NewCRI, fx.As(new(Provider)))),
)
