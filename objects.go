package nodekit

import (
	"path/filepath"

	"github.com/go-logr/logr"
	"go.uber.org/fx"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/managers/env"
	"github.com/nodekit/nodekit/managers/nodeip"
	"github.com/nodekit/nodekit/managers/objects"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/cri"
	"github.com/nodekit/nodekit/sources/apiserver"
)

// objectWiring connects the API object caches: the agent's registry
// registers its pods with the objects.Manager (so the objects they
// reference are watched), the runtime gets a cri.EnvSource (an
// env.Builder over the caches) when it takes one, and it reads image pull
// secrets through the caches too, as the kubelet's secret manager serves
// them. Embedders may decorate the cri.EnvSource.
func objectWiring() fx.Option {
	return fx.Options(
		fx.Provide(envSource),
		fx.Invoke(registerPods, setEnvSource, pullSecretsFromCache),
	)
}

type envParams struct {
	fx.In

	Cfg      Config
	Objects  objects.Manager           `optional:"true"`
	Services objects.ServiceLister     `optional:"true"`
	Node     agent.NodeResources       `optional:"true"`
	Events   noderuntime.EventRecorder `optional:"true"`
	NodeIPs  nodeip.Source             `optional:"true"`
	// APISource is the API pod source, nil without an API server.
	APISource *apiserver.Source `optional:"true"`
	Log       logr.Logger
}

// envSource is the default cri.EnvSource: the kubelet's env computation
// over the object caches (nil without an API server: then configMap and
// secret references fail and there is no service environment), with the
// node's addresses from the shared nodeip.Source.
func envSource(p envParams) cri.EnvSource {
	deps := env.Deps{Objects: p.Objects, Services: p.Services, Events: p.Events, NodeIPs: p.NodeIPs}
	if p.Services != nil && p.APISource != nil && p.Cfg.APISource.CheckpointDir != "" {
		deps.Services = &checkpointedServices{
			inner: p.Services, offline: p.APISource, log: p.Log.WithName("services"),
			dir: filepath.Join(p.Cfg.RootDir, "service-checkpoints"),
		}
	}
	if p.Node != nil {
		deps.Node = p.Node
	}
	return env.New(deps, env.Config{NodeIPs: p.Cfg.nodeIPConfig().NodeIPs, NodeName: p.Cfg.NodeName})
}

// envSetter is the optional runtime capability of taking an EnvSource.
type envSetter interface {
	SetEnvSource(cri.EnvSource)
}

func setEnvSource(rt noderuntime.Runtime, s cri.EnvSource) {
	if e, ok := rt.(envSetter); ok {
		e.SetEnvSource(s)
	}
}

type registerParams struct {
	fx.In

	Registry *agent.Registry
	Objects  objects.Manager `optional:"true"`
}

func registerPods(p registerParams) {
	if p.Objects != nil {
		p.Registry.SetObjectRegistrar(p.Objects)
	}
}

// pullSecretsFromCache gives the runtime the objects.Manager as its pull
// SecretGetter. It runs after confinement's setPullSecrets (fx runs
// invokes in order) and replaces its direct client reads.
func pullSecretsFromCache(rt noderuntime.Runtime, p registerParams) {
	if s, ok := rt.(secretSetter); ok && p.Objects != nil {
		s.SetSecretGetter(p.Objects)
	}
}
