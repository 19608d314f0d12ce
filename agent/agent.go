package agent

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/agent/admission"
	"github.com/nodekit/nodekit/managers/prober"
	"github.com/nodekit/nodekit/managers/volumes"
	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/sources"
)

// PodConfig is where the agent's pods come from: the sources.Mux, or anything
// that merges sources the same way.
type PodConfig interface {
	// Run feeds Updates until ctx ends.
	Run(ctx context.Context) error
	// Updates is the channel of incremental pod changes.
	Updates() <-chan sources.PodUpdate
	// SeenAllSources reports whether every source has sent its pods once;
	// until then the agent treats no pod as orphaned.
	SeenAllSources() bool
}

// WorkSource yields the pods whose periodic resync is due; podworkers.WorkQueue
// implements it.
type WorkSource interface {
	// GetWork returns and forgets the UIDs whose time has come.
	GetWork() []types.UID
}

// Agent is the sync loop: it receives pod changes, lifecycle events and
// timer ticks, and hands each pod to its pod worker. It runs the subsystems
// it is given.
type Agent struct {
	config   PodConfig
	pleg     pleg.Interface
	workers  podworkers.Workers
	queue    WorkSource
	rt       noderuntime.Runtime
	statuses StatusStore
	registry *Registry
	mirrors  MirrorClient
	admit    admission.Handler
	gate     StartGate
	events   noderuntime.EventRecorder // nil: rejections are only logged
	prober   prober.Manager
	volumes  volumes.Manager // nil: no volume manager to run
	external bool            // the caller runs the subsystems (Deps.RunByCaller)
	clk      clock.WithTicker
	log      logr.Logger
	cfg      Config

	loopTime     atomic.Int64 // unix nanos of the last sync loop iteration
	runtime      *runtimeMonitor
	mu           sync.Mutex
	rejected     map[types.UID]bool
	pendingStart map[types.UID]bool // static pods waiting for a namesake to stop
	waiting      []*corev1.Pod      // admitted pods the start gate holds, in admission order
	// heldTerminating are the waiting pods whose UID was already being
	// terminated when they were held (a static manifest put back): only
	// those may start although their termination was requested.
	heldTerminating map[types.UID]bool
	started         map[types.UID]string // full name of each pod handed to a worker

	// listed delivers housekeeping's runtime listings to the sync loop;
	// listing is true (sync loop only) while one is in flight.
	listed  chan listing
	listing bool
	// cleaningVolumes is true while a volume cleanup (CleanupPods) runs
	// off the sync loop; cleanups tracks those goroutines for Run.
	cleaningVolumes atomic.Bool
	cleanups        sync.WaitGroup
	// housekeepings counts finished housekeeping passes, skipped ones
	// included; tests wait on it.
	housekeepings atomic.Uint64
}

// Deps are the subsystems an Agent drives.
type Deps struct {
	Config   PodConfig
	PLEG     pleg.Interface
	Workers  podworkers.Workers
	Queue    WorkSource
	Runtime  noderuntime.Runtime
	Statuses StatusStore
	Registry *Registry
	// Mirrors, when set, removes mirror pods whose static pod is gone.
	Mirrors MirrorClient
	// Admission decides which new pods may run. Defaults (when nil) to
	// DefaultAdmission(Node, cfg, log).
	Admission admission.Handler
	// Node, when set and Admission is nil, makes the default admission
	// reject pods whose requests do not fit.
	Node NodeResources
	// StartGate decides when admitted pods are handed to their workers.
	// Defaults (when nil) to FIFOStart: oldest first, all at once.
	StartGate StartGate
	// Events, when set, receives a Warning event for every rejected pod.
	Events noderuntime.EventRecorder
	// RunByCaller, when true, means the caller runs Config, PLEG, Workers,
	// Prober and Volumes (agent.Module adds each to the runnables group),
	// and Run runs only the sync loop and the agent's own goroutines.
	// Defaults to false: Run runs them all.
	RunByCaller bool
	// Prober, when set, is run by the agent; its results (when it is a
	// prober.ResultsProvider) sync the pods whose probes changed, and
	// housekeeping stops probing pods that are gone. Give the same Manager
	// to the Syncer (WithProber).
	Prober prober.Manager
	// Volumes, when set, is run by the agent (its periodic refreshes), and
	// housekeeping tears down the volumes of pods that are gone. Give the
	// same Manager to the Syncer (WithVolumes).
	Volumes volumes.Manager
}

// New returns an Agent over deps. It does no I/O; Run starts everything.
func New(deps Deps, clk clock.WithTicker, log logr.Logger, cfg Config) *Agent {
	a := &Agent{
		config: deps.Config, pleg: deps.PLEG, workers: deps.Workers, queue: deps.Queue,
		rt: deps.Runtime, statuses: deps.Statuses, registry: deps.Registry, mirrors: deps.Mirrors, prober: deps.Prober, volumes: deps.Volumes,
		admit: deps.Admission, gate: deps.StartGate, events: deps.Events, external: deps.RunByCaller,
		clk: clk, log: log.WithName("agent"), cfg: cfg.withDefaults(),
		rejected: map[types.UID]bool{}, pendingStart: map[types.UID]bool{}, heldTerminating: map[types.UID]bool{},
		started: map[types.UID]string{}, listed: make(chan listing, 1),
	}
	if a.admit == nil {
		a.admit = DefaultAdmission(deps.Node, cfg, log)
	}
	if a.gate == nil {
		a.gate = FIFOStart{}
	}
	a.runtime = newRuntimeMonitor(a.rt, clk, a.log, a.cfg.RuntimeCheckPeriod, a.cfg.RuntimeCheckTimeout)
	a.loopTime.Store(clk.Now().UnixNano())
	return a
}

// Run starts the pod config, the PLEG, the pod workers, the prober and the
// volume manager (when the agent has them, unless Deps.RunByCaller), the
// runtime health check and the
// container garbage collector (when the runtime is a
// noderuntime.GarbageCollector), each on its own goroutine, then runs the
// sync loop until ctx ends. It returns nil
// on a clean stop, or the first error of a subsystem that failed (which
// stops the others).
func (a *Agent) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	start := func(name string, run func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(ctx); err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		}()
	}
	if !a.external {
		start("pod workers", a.workers.Run)
		start("pleg", a.pleg.Run)
		start("pod config", a.config.Run)
		start("prober", a.runProber)
		if a.volumes != nil {
			start("volumes", a.volumes.Run)
		}
	}
	start("runtime health", a.runtime.run)
	start("container gc", a.runContainerGC)
	a.log.Info("Starting sync loop", "node", a.cfg.NodeName)
	err := a.syncLoop(ctx, errs)
	cancel()
	wg.Wait()
	a.cleanups.Wait()
	if err != nil {
		a.log.Error(err, "Sync loop stopped")
	} else {
		a.log.Info("Sync loop stopped")
	}
	return err
}

func (a *Agent) syncLoop(ctx context.Context, errs <-chan error) error {
	syncTicker := a.clk.NewTicker(a.cfg.SyncPeriod)
	defer syncTicker.Stop()
	housekeeping := a.clk.NewTicker(a.cfg.HousekeepingPeriod)
	defer housekeeping.Stop()
	probes := a.probeChannels()
	wake := gateWake(a.gate)
	for {
		a.loopTime.Store(a.clk.Now().UnixNano())
		select {
		case <-ctx.Done():
			return nil
		case err := <-errs:
			return err
		case u := <-a.config.Updates():
			a.dispatch(u)
		case e := <-a.pleg.Watch():
			a.handlePLEGEvent(e)
		case u := <-probes.liveness:
			a.handleProbeUpdate(u)
		case u := <-probes.readiness:
			a.handleProbeUpdate(u)
		case u := <-probes.startup:
			a.handleProbeUpdate(u)
		case <-wake:
			a.releaseWaiting()
		case <-syncTicker.C():
			a.syncDue()
		case <-housekeeping.C():
			a.startHousekeeping(ctx)
		case l := <-a.listed:
			a.housekeeping(ctx, l)
		}
	}
}

// HealthChanged returns a channel that receives a value after the runtime
// health check changed its verdict (its first verdict included), so that a
// reader of HealthChecks, such as the node status, can look again at once.
// The same channel on every call; one pending value at most; never closed.
func (a *Agent) HealthChanged() <-chan struct{} { return a.runtime.changed }

// NetworkReady returns nil while the container runtime reports its pod
// network ready (NetworkReady), else the kubelet's error for the node's
// Ready condition: "container runtime network not ready: NetworkReady=false
// reason:R message:M". It is no health check: the agent runs (host-network
// pods still start) while the node is not ready. HealthChanged signals its
// changes. Safe for concurrent use.
func (a *Agent) NetworkReady() error { return a.runtime.networkCheck() }
