package http

import (
	"go.uber.org/fx"

	"github.com/nodekit/nodekit/sources"
)

// Module provides the HTTP manifest source as a sources.Source in the
// "sources" value group, which sources.Module's Mux reads. It needs a
// clock.WithTicker, a logr.Logger and a Config with URL and NodeName set;
// leave Module out to run without a manifest URL.
var Module = fx.Module("http",
	fx.Provide(fx.Annotate(New, fx.As(new(sources.Source)), fx.ResultTags(`group:"sources"`))),
)
