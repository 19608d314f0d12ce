package server

import "go.uber.org/fx"

// Module provides *Server. It needs a PodLister, a prometheus.Gatherer, a
// logr.Logger and a Config, and collects HealthCheck values from the value
// group "healthchecks" (see AsHealthCheck). It does not run the server: the
// agent runs it with the other subsystems.
var Module = fx.Module("server",
	fx.Provide(fx.Annotate(New, fx.ParamTags(``, `group:"healthchecks"`))),
)

// AsHealthCheck annotates a constructor whose result implements HealthCheck
// so that fx adds it to the "healthchecks" group that Module reads:
//
//	fx.Provide(server.AsHealthCheck(newRuntimeCheck))
func AsHealthCheck(constructor any) any {
	return fx.Annotate(constructor,
		fx.As(new(HealthCheck)),
		fx.ResultTags(`group:"healthchecks"`),
	)
}
