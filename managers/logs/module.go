package logs

import "go.uber.org/fx"

// Module provides the log rotator as Manager. It needs the CRI runtime
// service, a clock.WithTicker, a logr.Logger and a Config. It does not run
// it: the agent runs it with the other subsystems.
var Module = fx.Module("logs",
	fx.Provide(fx.Annotate(NewRotator, fx.As(new(Manager)))),
)
