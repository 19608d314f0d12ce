package server

import (
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"k8s.io/client-go/kubernetes"

	"github.com/nodekit/nodekit/managers/nodeip"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Module provides *Server (the read-only port) and *SecureServer (the
// kubelet API on the secure port). Server needs a PodLister, a
// prometheus.Gatherer, a logr.Logger and a Config, and collects HealthCheck
// values from the value group "healthchecks" (see AsHealthCheck);
// SecureServer also reads, when provided, a kubernetes.Interface, a
// runtime.Runtime, a Configz, a nodeip.Source and a VerbositySetter. It does not run them: the agent runs them
// with the other subsystems.
var Module = fx.Module("server",
	fx.Provide(fx.Annotate(New, fx.ParamTags(``, `group:"healthchecks"`))),
	fx.Provide(newSecureFromParams),
)

// Configz is the configuration the secure server shows on /configz.
type Configz struct {
	// Config is encoded as JSON.
	Config any
}

// secureParams are SecureServer's dependencies in the fx graph.
type secureParams struct {
	fx.In

	Pods     PodLister
	Checks   []HealthCheck        `group:"healthchecks"`
	Gatherer prometheus.Gatherer  `optional:"true"`
	Client   kubernetes.Interface `optional:"true"`
	Runtime  noderuntime.Runtime  `optional:"true"`
	Configz  *Configz             `optional:"true"`
	NodeIPs  nodeip.Source        `optional:"true"`
	// Verbosity, when provided, serves /debug/flags/v.
	Verbosity VerbositySetter `optional:"true"`
	Log       logr.Logger
	Config    Config
}

func newSecureFromParams(p secureParams) *SecureServer {
	deps := SecureDeps{Pods: p.Pods, Checks: p.Checks, Gatherer: p.Gatherer, Client: p.Client, Runtime: p.Runtime, NodeIPs: p.NodeIPs,
		Verbosity: p.Verbosity}
	if p.Configz != nil {
		deps.Configz = p.Configz.Config
	}
	return NewSecure(deps, p.Log, p.Config)
}

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
