package agent

import (
	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Module provides the Agent, its Registry, the in-memory StatusStore and the
// Syncer as the podworkers.SyncHandler. It needs a PodConfig, a WorkSource
// and a Requeuer (nodekit binds the sources.Mux and the podworkers.WorkQueue
// to them), the PLEG, the pod workers and the runtime.
var Module = fx.Module("agent",
	fx.Provide(
		NewRegistry,
		fx.Annotate(NewMemoryStatuses, fx.As(new(StatusStore))),
		fx.Annotate(NewSyncer, fx.As(new(podworkers.SyncHandler))),
		newFromParams,
	),
)

type agentParams struct {
	fx.In

	Config   PodConfig
	PLEG     pleg.Interface
	Workers  podworkers.Workers
	Queue    WorkSource
	Runtime  noderuntime.Runtime
	Statuses StatusStore
	Registry *Registry
	Clock    clock.WithTicker
	Log      logr.Logger
	Cfg      Config
}

func newFromParams(p agentParams) *Agent {
	return New(Deps{
		Config: p.Config, PLEG: p.PLEG, Workers: p.Workers, Queue: p.Queue,
		Runtime: p.Runtime, Statuses: p.Statuses, Registry: p.Registry,
	}, p.Clock, p.Log, p.Cfg)
}
