package simharness

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/agent/admission"
	"github.com/nodekit/nodekit/internal/settle"
	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/cri"
	"github.com/nodekit/nodekit/runtime/sim"
	"github.com/nodekit/nodekit/sources"
)

// Defaults of Options.
const (
	// DefaultNodeName is the node's name and the CRI instance ID.
	DefaultNodeName = "sim-node"
	// DefaultStep is how far StepUntil moves the clock at a time.
	DefaultStep = 100 * time.Millisecond
	// DefaultRealTimeLimit bounds every StepUntil in real time.
	DefaultRealTimeLimit = time.Minute
)

// Epoch is the fake clock's start time.
var Epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Options configure a Harness; the zero value is valid.
type Options struct {
	// Sim configures the simulated runtime. Defaults to the zero Config.
	Sim sim.Config
	// CRI configures the runtime manager; InstanceID, RootDir, PodLogsDir,
	// ContainerLogsDir and ResolvConf default to the node name and files in
	// a test directory.
	CRI cri.Config
	// Agent configures the agent; NodeName defaults to DefaultNodeName.
	Agent agent.Config
	// PLEG configures the generic PLEG. Defaults to its defaults.
	PLEG pleg.Config
	// PodWorkers configures the pod workers. Defaults to their defaults.
	PodWorkers podworkers.Config
	// Admission is the agent's admission chain. Defaults to
	// agent.DefaultAdmission without node resources.
	Admission admission.Handler
	// StartGate is the agent's start gate. Defaults to agent.FIFOStart.
	StartGate agent.StartGate
	// Events receives the agent's events (rejections). Defaults to none.
	Events noderuntime.EventRecorder
	// Log receives every subsystem's logs. Defaults to keeping them (up to
	// V(4)) in memory and writing them to the test log if the test fails;
	// benchmarks pass logr.Discard().
	Log logr.Logger
	// Step is how far StepUntil moves the clock at a time. Defaults to
	// 100ms.
	Step time.Duration
	// RealTimeLimit bounds each StepUntil in real time. Defaults to 1m.
	RealTimeLimit time.Duration
}

// Harness is the nodekit pipeline on the simulated runtime and a fake clock.
type Harness struct {
	// Clock is the fake clock every subsystem reads.
	Clock *clocktesting.FakeClock
	// Sim is the simulated runtime.
	Sim *sim.Runtime
	// Agent is the agent; its GetPods shows the pods' statuses.
	Agent *agent.Agent

	t      testing.TB
	opts   Options
	feed   *feed
	stop   func()
	stacks []byte // buffer of Settle's goroutine dumps
}

// New builds the pipeline without starting it. Call Start.
func New(t testing.TB, opts Options) *Harness {
	t.Helper()
	opts = withDefaults(t, opts)
	clk := clocktesting.NewFakeClock(Epoch)
	log := opts.Log
	if log.GetSink() == nil {
		log = failureLog(t, clk)
	}
	p := Build(clk, log, opts)
	return &Harness{Clock: clk, Sim: p.Sim, Agent: p.Agent, t: t, opts: opts, feed: p.feed}
}

// Complete fills the options' defaults, with a temporary root directory and
// resolver file of t.
func Complete(t testing.TB, o Options) Options { return withDefaults(t, o) }

func withDefaults(t testing.TB, o Options) Options {
	t.Helper()
	if o.Agent.NodeName == "" {
		o.Agent.NodeName = DefaultNodeName
	}
	if o.CRI.InstanceID == "" {
		o.CRI.InstanceID = o.Agent.NodeName
	}
	dir := t.TempDir()
	if o.CRI.RootDir == "" {
		o.CRI.RootDir = filepath.Join(dir, "root")
	}
	if o.CRI.PodLogsDir == "" {
		o.CRI.PodLogsDir = filepath.Join(o.CRI.RootDir, "logs")
	}
	if o.CRI.ContainerLogsDir == "" {
		o.CRI.ContainerLogsDir = filepath.Join(dir, "containers")
	}
	if o.CRI.ResolvConf == "" {
		o.CRI.ResolvConf = filepath.Join(dir, "resolv.conf")
		if err := os.WriteFile(o.CRI.ResolvConf, []byte("nameserver 10.0.0.53\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if o.Step <= 0 {
		o.Step = DefaultStep
	}
	if o.RealTimeLimit <= 0 {
		o.RealTimeLimit = DefaultRealTimeLimit
	}
	return o
}

// Start runs the agent (and with it the PLEG and the pod workers) until the
// end of the test, and lets it settle.
func (h *Harness) Start() {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Agent.Run(ctx) }()
	h.stop = func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Errorf("agent stopped with %v", err)
		}
	}
	h.t.Cleanup(h.stop)
	h.Settle()
}

// Add sends the pods to the agent as an ADD from the file source.
func (h *Harness) Add(pods ...*corev1.Pod) { h.send(sources.ADD, pods) }

// Update sends the pods to the agent as an UPDATE; with an unchanged pod it
// makes the pod's worker sync it once more.
func (h *Harness) Update(pods ...*corev1.Pod) { h.send(sources.UPDATE, pods) }

// Remove sends the pods to the agent as a REMOVE.
func (h *Harness) Remove(pods ...*corev1.Pod) { h.send(sources.REMOVE, pods) }

func (h *Harness) send(op sources.Op, pods []*corev1.Pod) {
	h.t.Helper()
	copies := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		copies = append(copies, p.DeepCopy())
	}
	h.feed.updates <- sources.PodUpdate{Op: op, Pods: copies, Source: sources.FileSource}
	h.Settle()
}

// Pod returns the agent's copy of the pod with its newest status, or nil.
func (h *Harness) Pod(uid types.UID) *corev1.Pod {
	for _, p := range h.Agent.GetPods() {
		if p.UID == uid {
			return p
		}
	}
	return nil
}

// Since returns how far the clock moved since Epoch.
func (h *Harness) Since() time.Duration { return h.Clock.Since(Epoch) }

// Step moves the clock by d in steps of Options.Step, settling after each.
func (h *Harness) Step(d time.Duration) {
	for d > 0 {
		s := min(d, h.opts.Step)
		h.Clock.Step(s)
		h.Settle()
		d -= s
	}
}

// StepUntil moves the clock in steps of Options.Step, settling after each,
// until cond holds, and returns how far the clock moved. It fails the test
// when the clock moved more than limit, or when RealTimeLimit passed.
func (h *Harness) StepUntil(what string, limit time.Duration, cond func() bool) time.Duration {
	h.t.Helper()
	start := h.Clock.Now()
	deadline := time.Now().Add(h.opts.RealTimeLimit)
	for !cond() {
		moved := h.Clock.Since(start)
		if moved > limit {
			h.t.Fatalf("%s: not within %s of simulated time", what, limit)
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s: not within %s of real time (simulated %s)", what, h.opts.RealTimeLimit, moved)
		}
		h.Clock.Step(h.opts.Step)
		h.Settle()
	}
	return h.Clock.Since(start)
}

// Settle yields until every other goroutine is blocked (on a channel, a
// timer of the fake clock, a lock...): then only a step of the clock or a
// call by the test can make the pipeline move. It fails the test when that
// does not happen within RealTimeLimit.
func (h *Harness) Settle() {
	h.t.Helper()
	if !settle.Wait(&h.stacks, h.opts.RealTimeLimit) {
		h.t.Fatalf("the pipeline did not settle within %s:\n%s", h.opts.RealTimeLimit, h.stacks)
	}
}

// feed is the agent's PodConfig: updates come from the harness, and every
// source counts as seen.
type feed struct {
	updates chan sources.PodUpdate
}

var _ agent.PodConfig = (*feed)(nil)

func (f *feed) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

func (f *feed) Updates() <-chan sources.PodUpdate { return f.updates }

func (f *feed) SeenAllSources() bool { return true }
