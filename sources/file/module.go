package file

import (
	"go.uber.org/fx"

	"github.com/nodekit/nodekit/sources"
)

// Module provides the manifest directory as a sources.Source in the
// "sources" value group, which sources.Module's Mux reads. It needs a
// clock.WithTicker, a logr.Logger and a Config with Path and NodeName set;
// leave Module out to run without static pods.
var Module = fx.Module("file",
	fx.Provide(fx.Annotate(New, fx.As(new(sources.Source)), fx.ResultTags(`group:"sources"`))),
)
