package agent

import (
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/agent/admission"
	"github.com/nodekit/nodekit/managers/nodeip"
	"github.com/nodekit/nodekit/managers/prober"
	"github.com/nodekit/nodekit/managers/volumes"
	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/podworkers"
	"github.com/nodekit/nodekit/runnable"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Module provides the Agent, its Registry and the Syncer as the
// podworkers.SyncHandler. It needs a PodConfig, a WorkSource and a Requeuer
// (nodekit binds the sources.Mux and the podworkers.WorkQueue to them), a
// StatusStore (nodekit binds managers/status; NewMemoryStatuses is the
// API-less default), the PLEG, the pod workers and the runtime, and uses a
// MirrorClient, an ObjectRegistrar (for the Registry), a prober.Manager, a volumes.Manager, NodeResources and a
// runtime.EventRecorder when they are provided.
//
// It also provides the agent's two policy slots. The admission.Chain is
// DefaultAdmission followed by every admission.Handler in the value group
// "admission"; decorate the Chain to reorder or replace handlers. The
// StartGate is FIFOStart; fx.Decorate it to change the start order.
//
// The agent it builds does not run its subsystems itself: the Module adds
// the sync loop, the pod workers, the PLEG, the pod config, and the prober
// and volume manager when present, to the runnables group (package
// runnable), which the application runs.
var Module = fx.Module("agent",
	fx.Provide(
		newRegistryFromParams,
		fx.Annotate(newSyncerFromParams, fx.As(new(podworkers.SyncHandler))),
		newFromParams,
		newAdmissionChain,
		func() StartGate { return FIFOStart{} },
		fx.Annotate(runnables, fx.ResultTags(`group:"`+runnable.Group+`,flatten"`)),
	),
)

type registryParams struct {
	fx.In

	Objects ObjectRegistrar `optional:"true"`
}

// newRegistryFromParams is NewRegistry telling Objects, when provided, of
// the pods it holds.
func newRegistryFromParams(p registryParams) *Registry {
	r := NewRegistry()
	r.SetObjectRegistrar(p.Objects)
	return r
}

type runnablesParams struct {
	fx.In

	Agent   *Agent
	Config  PodConfig
	PLEG    pleg.Interface
	Workers podworkers.Workers
	Prober  prober.Manager  `optional:"true"`
	Volumes volumes.Manager `optional:"true"`
}

// runnables puts the sync loop and the subsystems the agent was given
// (the values after any decoration) in the runnables group: the agent
// built by the Module leaves running them to the application.
func runnables(p runnablesParams) []runnable.Runnable {
	out := []runnable.Runnable{
		{Name: "agent", Run: p.Agent.Run},
		{Name: "pod workers", Run: p.Workers.Run},
		{Name: "pleg", Run: p.PLEG.Run},
		{Name: "pod config", Run: p.Config.Run},
	}
	if p.Prober != nil {
		out = append(out, runnable.Runnable{Name: "prober", Run: p.Prober.Run})
	}
	if p.Volumes != nil {
		out = append(out, runnable.Runnable{Name: "volumes", Run: p.Volumes.Run})
	}
	return out
}

type admissionParams struct {
	fx.In

	Node  NodeResources `optional:"true"`
	Cfg   Config
	Log   logr.Logger
	Extra []admission.Handler `group:"admission"`
}

// newAdmissionChain is DefaultAdmission, then the handlers of the
// "admission" group.
func newAdmissionChain(p admissionParams) admission.Chain {
	return append(DefaultAdmission(p.Node, p.Cfg, p.Log.WithName("agent")), p.Extra...)
}

type agentParams struct {
	fx.In

	Config    PodConfig
	PLEG      pleg.Interface
	Workers   podworkers.Workers
	Queue     WorkSource
	Runtime   noderuntime.Runtime
	Statuses  StatusStore
	Registry  *Registry
	Mirrors   MirrorClient    `optional:"true"`
	Prober    prober.Manager  `optional:"true"`
	Volumes   volumes.Manager `optional:"true"`
	Admission admission.Chain
	Gate      StartGate
	Events    noderuntime.EventRecorder `optional:"true"`
	Clock     clock.WithTicker
	Log       logr.Logger
	Cfg       Config
}

func newFromParams(p agentParams) *Agent {
	return New(Deps{
		Config: p.Config, PLEG: p.PLEG, Workers: p.Workers, Queue: p.Queue,
		Runtime: p.Runtime, Statuses: p.Statuses, Registry: p.Registry, Mirrors: p.Mirrors,
		Prober: p.Prober, Volumes: p.Volumes, Admission: p.Admission, StartGate: p.Gate, Events: p.Events,
		RunByCaller: true,
	}, p.Clock, p.Log, p.Cfg)
}

type syncerParams struct {
	fx.In

	Runtime  noderuntime.Runtime
	Statuses StatusStore
	Requeue  Requeuer
	Mirrors  MirrorClient          `optional:"true"`
	Prober   prober.Manager        `optional:"true"`
	Volumes  volumes.Manager       `optional:"true"`
	NodeIPs  nodeip.Source         `optional:"true"`
	Registry prometheus.Registerer `optional:"true"`
	Clock    clock.WithTicker
	Log      logr.Logger
	Cfg      Config
}

func newSyncerFromParams(p syncerParams) *Syncer {
	opts := []SyncerOption{WithMetrics(p.Registry)}
	if p.Mirrors != nil {
		opts = append(opts, WithMirrorClient(p.Mirrors))
	}
	if p.Prober != nil {
		opts = append(opts, WithProber(p.Prober))
	}
	if p.Volumes != nil {
		opts = append(opts, WithVolumes(p.Volumes))
	}
	if p.NodeIPs != nil {
		opts = append(opts, WithNodeIPs(p.NodeIPs))
	}
	return NewSyncer(p.Runtime, p.Statuses, p.Requeue, p.Clock, p.Log, p.Cfg, opts...)
}
