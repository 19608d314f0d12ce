package plegtest

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/pleg"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Env is what the PLEG under test is built from. Each case has its own.
type Env struct {
	// Runtime is the runtime under test: with Backend.Open the nodekit CRI
	// runtime manager over the backend, with an instance ID of its own
	// (it is also a pleg.EventDecoder); with Backend.Runtime the one it
	// returned.
	Runtime noderuntime.Runtime
	// Events is the backend's CRI runtime service, for an evented PLEG;
	// nil with a Backend.Runtime that has none.
	Events pleg.EventSource
	// Cache is the cache the PLEG must write and the suite reads.
	Cache *pleg.Cache
	// Clock is the backend's clock.
	Clock clock.WithTicker
	// Log keeps the case's logs; they are printed when the case fails.
	Log logr.Logger
}

// Factory builds the PLEG under test. The suite calls Run and stops it by
// cancelling Run's context at the end of the case.
type Factory func(env Env) pleg.Interface

// Options tune the suite to the PLEG under test.
type Options struct {
	// KubeletEvents requires the kubelet's events: ContainerStarted,
	// ContainerDied and ContainerRemoved naming each container and sandbox
	// that changed, each once. Without it, any event naming the pod counts.
	KubeletEvents bool
	// Within bounds, on the backend's clock, how long a change may take to
	// reach the cache and the agent, and a waiting worker to be woken.
	// Defaults to 5s on a fake clock and 15s on the real one.
	Within time.Duration

	// newCache builds the case's cache; defaults to pleg.NewCache. The
	// suite's own tests set it to show a case fails a broken cache.
	newCache func(clock.Clock) *pleg.Cache
}

// Suite runs every case on the simulated runtime with a fake clock.
func Suite(t *testing.T, newPLEG Factory, opts Options) {
	t.Helper()
	SuiteOn(t, SimBackend(), newPLEG, opts)
}

// SuiteOn runs every case on backend b, one after the other, each as a
// subtest.
func SuiteOn(t *testing.T, b Backend, newPLEG Factory, opts Options) {
	t.Helper()
	for _, c := range cases() {
		t.Run(b.Name+"/"+c.name, func(t *testing.T) {
			c.run(newHarness(t, b, newPLEG, opts))
		})
	}
}

// testCase is one property checked on a harness.
type testCase struct {
	name string
	run  func(h *harness)
}

func cases() []testCase {
	return []testCase{
		{"every change reaches the agent after the cache holds it", caseLifecycle},
		{"no exit of many pods is lost", caseManyExits},
		{"a worker syncing on newer statuses sees its own actions and never duplicates a container", caseWorker},
		{"a waiting worker is woken for an idle pod and for an unknown one", caseIdleWaiter},
		{"a status stamped in the future does not hide later changes", caseFutureStamp},
	}
}
