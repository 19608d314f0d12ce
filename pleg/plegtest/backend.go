package plegtest

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	criapi "k8s.io/cri-api/pkg/apis"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/internal/settle"
	"github.com/nodekit/nodekit/internal/suitekit"
	"github.com/nodekit/nodekit/pleg"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/sim"
)

// Backend is a container runtime the suite runs pods on: either CRI
// services (Open), over which the suite builds a runtime/cri Manager, or
// any runtime.Runtime (Runtime).
type Backend struct {
	// Name names the backend in subtest names.
	Name string
	// Runtime, when set, returns the runtime one case uses, with what the
	// suite needs beside it, and registers its own cleanup on tb; Open,
	// Image's default and CgroupParent are then not used by the suite for
	// building a runtime. Each case needs a runtime that sees only its own
	// pods (a new one, or one with an instance ID of its own).
	Runtime func(tb testing.TB) RuntimeEnv
	// Open returns the CRI services one case uses and the clock that times
	// them, and registers its own cleanup on tb. A
	// *testingclock.FakeClock is moved by the suite; any other clock is
	// real time.
	Open func(tb testing.TB) (criapi.RuntimeService, criapi.ImageManagerService, clock.WithTicker)
	// Image is the containers' image; on a real runtime it must have sh
	// and sleep and be present. Defaults to "plegtest/busybox:1".
	Image string
	// CgroupParent is the CRI manager's cgroup parent. Defaults to none.
	CgroupParent string
}

// RuntimeEnv is a runtime under test and what the suite needs beside it.
type RuntimeEnv struct {
	// Runtime runs the case's pods; the suite calls SyncPod, KillPod and
	// GetPodStatus (to read the truth past the PLEG), and GarbageCollect in
	// the cleanup when it is a runtime.GarbageCollector. Its pods must
	// honour the containers' commands (sh -c with sleep and a TERM trap)
	// or runtime/sim's annotations, as the suite's pods carry both.
	Runtime noderuntime.Runtime
	// Outside makes changes behind the agent's back: it stops and removes
	// containers and sandboxes by the IDs the runtime reports.
	Outside Outside
	// Events, when set, is the runtime's CRI event stream, for an evented
	// PLEG (Env.Events). Defaults to none.
	Events pleg.EventSource
	// Clock times the runtime. A *testingclock.FakeClock is moved by the
	// suite; any other clock is real time.
	Clock clock.WithTicker
}

// Outside is what the suite does to a runtime from outside the agent. A
// criapi.RuntimeService is one.
type Outside interface {
	// StopContainer stops a container, killing it after timeout seconds.
	StopContainer(ctx context.Context, containerID string, timeout int64) error
	// RemoveContainer removes a stopped container.
	RemoveContainer(ctx context.Context, containerID string) error
	// StopPodSandbox stops a sandbox.
	StopPodSandbox(ctx context.Context, podSandboxID string) error
	// RemovePodSandbox removes a stopped sandbox.
	RemovePodSandbox(ctx context.Context, podSandboxID string) error
}

var _ Outside = criapi.RuntimeService(nil)

// Epoch is where the simulated backend's fake clock starts.
var Epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// SimBackend is the simulated runtime (runtime/sim) with a fake clock,
// new for each case.
func SimBackend() Backend {
	return Backend{
		Name: "sim",
		Open: func(testing.TB) (criapi.RuntimeService, criapi.ImageManagerService, clock.WithTicker) {
			clk := testingclock.NewFakeClock(Epoch)
			rt := sim.New(clk, logr.Discard(), sim.Config{})
			return rt, rt, clk
		},
	}
}

// CRIBackend is a real CRI runtime at endpoint (e.g. containerd's
// unix:///run/containerd/containerd.sock) on the real clock; image must be
// present there and have sh and sleep. Each case connects anew.
func CRIBackend(endpoint, image, cgroupParent string) Backend {
	return Backend{
		Name:         "cri",
		Image:        image,
		CgroupParent: cgroupParent,
		Open: func(tb testing.TB) (criapi.RuntimeService, criapi.ImageManagerService, clock.WithTicker) {
			tb.Helper()
			rs, is := suitekit.ConnectCRI(tb, endpoint)
			return rs, is, clock.RealClock{}
		},
	}
}

// Timing of the driver.
const (
	// fakeStep is how far the fake clock moves at a time.
	fakeStep = 10 * time.Millisecond
	// realPoll is the pause between two polls on the real clock.
	realPoll = 5 * time.Millisecond
	// realTimeLimit bounds every wait in real time.
	realTimeLimit = 3 * time.Minute
)

// driver moves time: the fake clock in steps, letting every goroutine
// settle after each, or real time by polling.
type driver struct {
	tb     testing.TB
	clk    clock.WithTicker
	fake   *testingclock.FakeClock
	stacks []byte
}

func newDriver(tb testing.TB, clk clock.WithTicker) *driver {
	d := &driver{tb: tb, clk: clk}
	d.fake, _ = clk.(*testingclock.FakeClock)
	return d
}

// until polls cond, moving time, and fails the test when within passed on
// the clock first.
func (d *driver) until(what string, within time.Duration, cond func() bool) {
	d.tb.Helper()
	start := d.clk.Now()
	deadline := time.Now().Add(realTimeLimit)
	for !cond() {
		if moved := d.clk.Since(start); moved > within {
			d.tb.Fatalf("%s: not within %v", what, within)
		}
		if time.Now().After(deadline) {
			d.tb.Fatalf("%s: not within %v of real time", what, realTimeLimit)
		}
		d.tick()
	}
}

// pass lets dur go by on the clock.
func (d *driver) pass(dur time.Duration) {
	end := d.clk.Now().Add(dur)
	for d.clk.Now().Before(end) {
		d.tick()
	}
}

// tick moves time a little.
func (d *driver) tick() {
	if d.fake == nil {
		time.Sleep(realPoll)
		return
	}
	d.fake.Step(fakeStep)
	d.settle()
}

// settle waits, with a fake clock, until every other goroutine is blocked:
// then nothing moves until the clock does or the test acts.
func (d *driver) settle() {
	if d.fake == nil {
		return
	}
	if !settle.Wait(&d.stacks, realTimeLimit) {
		d.tb.Fatalf("goroutines did not settle within %v:\n%s", realTimeLimit, d.stacks)
	}
}
