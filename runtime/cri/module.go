package cri

import (
	"github.com/go-logr/logr"
	"go.uber.org/fx"
	criapi "k8s.io/cri-api/pkg/apis"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/managers/nodeip"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Module provides the CRI runtime manager as the runtime.Runtime. It needs a
// criapi.RuntimeService, a criapi.ImageManagerService, a clock.WithTicker, a
// logr.Logger and a cri.Config from the application, and takes at
// construction, when they are provided, a runtime.EventRecorder, an
// EnvSource, a nodeip.Source, a runtime.VolumeGetter, a SecretGetter, a
// RuntimeClassGetter, runtime.StartupResults and runtime.LivenessResults
// (nodekit binds the event recorder, the object caches, the shared node
// addresses, the volume manager and the prober to them). The agent finds
// the runtime.GarbageCollector capability by type assertion.
var Module = fx.Module("cri",
	fx.Provide(fx.Annotate(newFromParams, fx.As(new(noderuntime.Runtime)))),
)

type params struct {
	fx.In

	RuntimeService criapi.RuntimeService
	ImageService   criapi.ImageManagerService
	Clock          clock.WithTicker
	Log            logr.Logger
	Config         Config

	Events         noderuntime.EventRecorder   `optional:"true"`
	Env            EnvSource                   `optional:"true"`
	NodeIPs        nodeip.Source               `optional:"true"`
	Volumes        noderuntime.VolumeGetter    `optional:"true"`
	Secrets        SecretGetter                `optional:"true"`
	RuntimeClasses RuntimeClassGetter          `optional:"true"`
	Startup        noderuntime.StartupResults  `optional:"true"`
	Liveness       noderuntime.LivenessResults `optional:"true"`
}

// newFromParams is NewManager with the optional collaborators given at
// construction; the Set methods are for callers that build a Manager
// without fx.
func newFromParams(p params) *Manager {
	m := NewManager(p.RuntimeService, p.ImageService, p.Clock, p.Log, p.Config)
	// nil is each setter's default.
	m.SetEventRecorder(p.Events)
	m.SetEnvSource(p.Env)
	m.SetNodeIPs(p.NodeIPs)
	m.SetVolumeGetter(p.Volumes)
	m.SetSecretGetter(p.Secrets)
	m.SetRuntimeClassGetter(p.RuntimeClasses)
	m.SetStartupResults(p.Startup)
	m.SetLivenessResults(p.Liveness)
	return m
}
