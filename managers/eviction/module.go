package eviction

import (
	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Params are the manager's dependencies under fx. Reclaimer, ContainerGC
// and Ranker are optional: without the first two disk signals evict at
// once, without a Ranker the kubelet's order applies.
type Params struct {
	fx.In

	Stats   StatsReader
	Pods    PodLister
	Killer  PodKiller
	Reclaim Reclaimer   `optional:"true"`
	Dead    ContainerGC `optional:"true"`
	Ranker  Ranker      `optional:"true"`
	Events  noderuntime.EventRecorder
	Clock   clock.WithTicker
	Log     logr.Logger
	Config  Config
}

// New builds the Default manager from fx parameters; it does no I/O.
func New(p Params) (*Default, error) {
	return NewDefault(p.Stats, p.Pods, p.Killer, p.Reclaim, p.Dead, p.Ranker, p.Events, p.Clock, p.Log, p.Config)
}

// Module provides the eviction manager as Manager. It does not run it:
// the agent runs it with the other subsystems.
var Module = fx.Module("eviction",
	fx.Provide(fx.Annotate(New, fx.As(new(Manager)))),
)
