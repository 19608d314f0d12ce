package plegtest

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/pleg"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/runtimetest"
	"github.com/nodekit/nodekit/runtime/sim"
)

// opaque hides every method of a runtime beyond runtime.Runtime (no
// GarbageCollector, no EventDecoder), as an embedder's own runtime would.
type opaque struct{ noderuntime.Runtime }

// opaqueBackend is a Backend.Runtime: an opaque runtime over the simulated
// CRI runtime, which also makes the changes from outside.
func opaqueBackend() Backend {
	return Backend{Name: "opaque", Runtime: func(tb testing.TB) RuntimeEnv {
		clk := testingclock.NewFakeClock(Epoch)
		s := sim.New(clk, logr.Discard(), sim.Config{})
		return RuntimeEnv{Runtime: opaque{runtimetest.NewCRIManager(tb, s, s, clk, "")}, Outside: s, Clock: clk}
	}}
}

// The suite runs on any runtime.Runtime, not only on CRI services: the
// generic PLEG passes it on an opaque runtime.
func TestSuiteRunsOnAnyRuntime(t *testing.T) {
	SuiteOn(t, opaqueBackend(), func(env Env) pleg.Interface {
		if _, ok := env.Runtime.(opaque); !ok {
			t.Errorf("Env.Runtime is %T, want the backend's own runtime", env.Runtime)
		}
		if env.Events != nil {
			t.Errorf("Env.Events = %T, want nil for a backend without events", env.Events)
		}
		return pleg.NewGeneric(env.Runtime, env.Cache, env.Clock, nil, env.Log, pleg.Config{})
	}, Options{KubeletEvents: true})
}

// ahead is a clock two hours ahead of its base.
type ahead struct{ clock.Clock }

func (a ahead) Now() time.Time                  { return a.Clock.Now().Add(2 * time.Hour) }
func (a ahead) Since(t time.Time) time.Duration { return a.Now().Sub(t) }

// A cache that takes stamps up to two hours ahead of the agent's now, as
// the kubelet's cache takes any, lets a status stamped in the future hide
// the later changes: the case fails it with the generic PLEG.
func TestFutureStampCaseFailsACacheThatTrustsFutureStamps(t *testing.T) {
	var c testCase
	for _, x := range cases() {
		if x.name == "a status stamped in the future does not hide later changes" {
			c = x
		}
	}
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		opts := Options{KubeletEvents: true, newCache: func(clk clock.Clock) *pleg.Cache { return pleg.NewCache(ahead{clk}) }}
		c.run(newHarness(r, SimBackend(), func(env Env) pleg.Interface {
			return pleg.NewGeneric(env.Runtime, env.Cache, env.Clock, nil, env.Log, pleg.Config{})
		}, opts))
	}()
	<-done
	msgs := strings.Join(r.messages(), "\n")
	t.Logf("the case reported: %q", msgs)
	if want := "the cache to show the container exited after a status stamped an hour ahead: not within"; !strings.Contains(msgs, want) {
		t.Errorf("the case reported %q, want a failure containing %q", msgs, want)
	}
}
