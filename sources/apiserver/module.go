package apiserver

import (
	"go.uber.org/fx"

	"github.com/nodekit/nodekit/sources"
)

// Module provides the API server source as a sources.Source in the
// "sources" value group, which sources.Module's Mux reads. It needs a
// kubernetes.Interface, a clock.Clock, a logr.Logger and a Config with
// NodeName set; leave Module out to run without an API server.
var Module = fx.Module("apiserver",
	fx.Provide(fx.Annotate(New, fx.As(new(sources.Source)), fx.ResultTags(`group:"sources"`))),
)
