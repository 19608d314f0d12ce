package nodekit

import (
	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"k8s.io/client-go/kubernetes"

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
// reference are watched), and the runtime's constructor gets a
// cri.EnvSource (an env.Builder over the caches) and reads image pull
// secrets through the caches too, as the kubelet's secret manager serves
// them. Embedders may decorate the cri.EnvSource and the cri.SecretGetter.
func objectWiring() fx.Option {
	return fx.Options(
		fx.Provide(envSource, objectRegistrar, pullSecrets),
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
	// Offline is the store of checkpointed pods' objects (offlineContents),
	// nil with the object checkpoint off.
	Offline env.OfflineObjects `optional:"true"`
	// CheckpointedServices is the service checkpoint (serviceCheckpoint),
	// nil with the pod checkpoint off.
	CheckpointedServices *checkpointedServices `optional:"true"`
	Log                  logr.Logger
}

// envSource is the default cri.EnvSource: the kubelet's env computation
// over the object caches (nil without an API server: then configMap and
// secret references fail and there is no service environment), with the
// node's addresses from the shared nodeip.Source, the service checkpoint
// standing in for the Services while offline, and the object checkpoint
// (which then also prunes what the builder logged of gone pods).
func envSource(p envParams) cri.EnvSource {
	deps := env.Deps{Objects: p.Objects, Services: p.Services, Events: p.Events, NodeIPs: p.NodeIPs,
		Offline: p.Offline, Log: p.Log}
	if p.CheckpointedServices != nil {
		deps.Services = p.CheckpointedServices
	}
	if p.Node != nil {
		deps.Node = p.Node
	}
	b := env.New(deps, env.Config{NodeIPs: p.Cfg.nodeIPConfig().NodeIPs, NodeName: p.Cfg.NodeName})
	if c, ok := p.Offline.(*offlineCopies); ok {
		c.onForget(b.ForgetOffline)
	}
	return b
}

type objectsParams struct {
	fx.In

	Client  kubernetes.Interface `optional:"true"`
	Objects objects.Manager      `optional:"true"`
}

// objectRegistrar is the object caches as the agent's Registry's
// ObjectRegistrar, nil without them.
func objectRegistrar(p objectsParams) agent.ObjectRegistrar {
	if p.Objects == nil || isNil(p.Objects) {
		return nil
	}
	return p.Objects
}

// pullSecrets is the runtime's SecretGetter for image pull secrets: the
// object caches, as the kubelet's secret manager serves them, else direct
// reads through the client, else none (pulls carry no credentials).
func pullSecrets(p objectsParams) cri.SecretGetter {
	switch {
	case p.Objects != nil && !isNil(p.Objects):
		return p.Objects
	case p.Client != nil:
		return clientSecrets{p.Client}
	}
	return nil
}
