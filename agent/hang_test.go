package agent

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/managers/prober"
	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/podworkers"
	"github.com/nodekit/nodekit/sources"
)

// A runtime that stops answering (SIGSTOP) must not stall the sync loop:
// housekeeping lists it and the health check asks its status off the loop,
// so PLEG events, pod changes and probe results are still handled, and the
// "runtime" check fails within RuntimeCheckPeriod + RuntimeCheckTimeout.
func TestSyncLoopKeepsTurningWhileTheRuntimeHangs(t *testing.T) {
	lt := newLoopTest(t, Config{})
	fp := newFakeProber()
	lt.agent.prober = fp
	lt.config.seen.Store(true)
	lt.start()
	checks := map[string]Check{}
	for _, c := range lt.agent.HealthChecks() {
		checks[c.Name()] = c
	}
	if err := checks["runtime"].Check(); err != nil {
		t.Fatalf("runtime check before the hang: %v", err)
	}
	lt.healthChanged() // the first verdict
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{staticPod("a", "a")}}
	lt.nextCall()

	lt.rt.hang()
	lt.clk.Step(2 * time.Second) // housekeeping lists the runtime
	lt.waitFor("housekeeping's listing to hang", func() bool { return lt.rt.blocked.Load() == 1 })
	lt.clk.Step(3 * time.Second) // the runtime check asks for its status
	lt.waitFor("the status check to hang", func() bool { return lt.rt.blocked.Load() == 2 })

	lt.agent.pleg.(*fakePLEG).events <- &pleg.Event{ID: "a", Type: pleg.ContainerDied}
	if c := lt.nextCall(); c.UpdateType != podworkers.SyncPodSync || c.Pod.UID != "a" {
		t.Fatalf("after a PLEG event: %s %v, want a sync of a", c.UpdateType, c.Pod)
	}
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{staticPod("b", "b")}}
	if c := lt.nextCall(); c.UpdateType != podworkers.SyncPodCreate || c.Pod.UID != "b" {
		t.Fatalf("after a new pod: %s %v, want a create of b", c.UpdateType, c.Pod)
	}
	fp.readiness.ch <- prober.Update{PodUID: "a", Probe: prober.Readiness, Result: prober.Failure}
	if c := lt.nextCall(); c.UpdateType != podworkers.SyncPodSync || c.Pod.UID != "a" {
		t.Fatalf("after a probe result: %s %v, want a sync of a", c.UpdateType, c.Pod)
	}

	lt.clk.Step(2 * time.Second) // RuntimeCheckTimeout
	lt.waitFor("the runtime check to fail", func() bool {
		err := checks["runtime"].Check()
		return err != nil && strings.Contains(err.Error(), "did not answer a status check within 2s")
	})
	lt.healthChanged()
	lt.clk.Step(4 * time.Second) // two more housekeeping ticks
	lt.noCall()
	if n := lt.rt.listings.Load(); n != 1 {
		t.Fatalf("%d runtime listings while the first hangs, want 1", n)
	}
	if n := lt.agent.housekeepings.Load(); n != 0 {
		t.Fatalf("%d housekeeping passes finished while the runtime hangs, want 0", n)
	}

	lt.rt.release()
	lt.waitHousekeepings(1)
	lt.clk.Step(5 * time.Second) // the next runtime check
	lt.waitFor("the runtime check to pass again", func() bool { return checks["runtime"].Check() == nil })
	lt.healthChanged()
}

// healthChanged waits for the agent's health-changed signal.
func (lt *loopTest) healthChanged() {
	lt.t.Helper()
	select {
	case <-lt.agent.HealthChanged():
	case <-time.After(10 * time.Second):
		lt.t.Fatal("no health change signalled")
	}
}
