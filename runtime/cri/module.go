package cri

import (
	"go.uber.org/fx"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Module provides the CRI runtime manager as the runtime.Runtime. It needs a
// criapi.RuntimeService, a criapi.ImageManagerService, a clock.WithTicker, a
// logr.Logger and a cri.Config from the application. The agent finds the
// runtime.GarbageCollector capability by type assertion.
var Module = fx.Module("cri",
	fx.Provide(fx.Annotate(NewManager, fx.As(new(noderuntime.Runtime)))),
)
