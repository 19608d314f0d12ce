package simharness

import (
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/podworkers"
	"github.com/nodekit/nodekit/runtime/cri"
	"github.com/nodekit/nodekit/runtime/sim"
	"github.com/nodekit/nodekit/sources"
)

// Pipeline is the real nodekit pipeline (CRI manager, generic PLEG, pod
// workers, agent) on the simulated runtime, on any clock: the fake clock of
// a Harness, or the real clock of a benchmark.
type Pipeline struct {
	// Sim is the simulated runtime.
	Sim *sim.Runtime
	// Runtime is the CRI runtime manager over Sim.
	Runtime *cri.Manager
	// PLEG is the generic PLEG.
	PLEG *pleg.Generic
	// Statuses holds every pod's API status.
	Statuses *agent.MemoryStatuses
	// Agent is the sync loop; run it with Agent.Run.
	Agent *agent.Agent

	feed *feed
}

// Build wires the pipeline. opts must be complete (the CRI root and resolver
// file set); reg may be nil.
func Build(clk clock.WithTicker, log logr.Logger, opts Options) *Pipeline {
	return BuildWithRegistry(clk, log, nil, opts)
}

// BuildWithRegistry is Build with the subsystems' metrics on reg.
func BuildWithRegistry(clk clock.WithTicker, log logr.Logger, reg prometheus.Registerer, opts Options) *Pipeline {
	rt := sim.New(clk, log, opts.Sim)
	mgr := cri.NewManager(rt, rt, clk, log, opts.CRI)
	cache := pleg.NewCache(clk)
	generic := pleg.NewGeneric(mgr, cache, clk, reg, log, opts.PLEG)
	queue := podworkers.NewWorkQueue(clk)
	statuses := agent.NewMemoryStatuses()
	syncer := agent.NewSyncer(mgr, statuses, queue, clk, log, opts.Agent, agent.WithMetrics(reg))
	workers := podworkers.New(syncer, cache, queue, clk, reg, log, opts.PodWorkers)
	f := &feed{updates: make(chan sources.PodUpdate, 100)}
	a := agent.New(agent.Deps{
		Config: f, PLEG: generic, Workers: workers, Queue: queue,
		Runtime: mgr, Statuses: statuses, Registry: agent.NewRegistry(),
		Admission: opts.Admission, StartGate: opts.StartGate, Events: opts.Events,
	}, clk, log, opts.Agent)
	return &Pipeline{Sim: rt, Runtime: mgr, PLEG: generic, Statuses: statuses, Agent: a, feed: f}
}

// Send hands pods to the agent as one update from the file source. The
// agent owns the pods afterwards.
func (p *Pipeline) Send(op sources.Op, pods ...*corev1.Pod) {
	p.feed.updates <- sources.PodUpdate{Op: op, Pods: pods, Source: sources.FileSource}
}
