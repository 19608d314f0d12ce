package sources

import "go.uber.org/fx"

// Module provides *Mux, built from every Source in the "sources" value
// group (see sources/file.Module). It needs a clock.Clock and a
// logr.Logger. It does not run the Mux: the agent runs it.
var Module = fx.Module("sources",
	fx.Provide(fx.Annotate(NewMux, fx.ParamTags(`group:"sources"`))),
)
