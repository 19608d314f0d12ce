package volumes

import (
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"k8s.io/utils/clock"
)

// Module provides the default VolumeManager as Manager. It uses an
// ObjectGetter, a TokenGetter,
// NodeResources and a prometheus.Registerer when they are provided (nodekit binds managers/objects and
// the node's machine info to them), and needs an EventRecorder, a
// clock.WithTicker, a logr.Logger and a Config, and an OfflineStore when one
// is provided. It registers no lifecycle
// hooks: the agent runs the Manager it is given.
var Module = fx.Module("volumes",
	fx.Provide(fx.Annotate(newFromParams, fx.As(new(Manager)))),
)

type params struct {
	fx.In

	Objects  ObjectGetter  `optional:"true"`
	Tokens   TokenGetter   `optional:"true"`
	Node     NodeResources `optional:"true"`
	Events   EventRecorder
	Clock    clock.WithTicker
	Registry prometheus.Registerer `optional:"true"`
	// Offline is the store of checkpointed pods' objects and tokens
	// (nodekit provides one unless the pod checkpoint is off).
	Offline OfflineStore `optional:"true"`
	Log     logr.Logger
	Cfg     Config
}

func newFromParams(p params) *VolumeManager {
	m := New(p.Objects, p.Tokens, p.Node, p.Events, p.Clock, p.Registry, p.Log, p.Cfg)
	if p.Offline != nil {
		m.SetOfflineStore(p.Offline)
	}
	return m
}
