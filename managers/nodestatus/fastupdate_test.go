package nodestatus

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestNodeTurnsReadyAsSoonAsTheAgentIsReady(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	h.health.set(errors.New("PLEG has not relisted yet"))
	h.start()
	h.wait(eventSynced)
	if c := mustCondition(t, h.node(), corev1.NodeReady); c.Status != corev1.ConditionFalse {
		t.Fatalf("Ready = %s at registration with an unready agent, want False", c.Status)
	}
	h.health.set(nil)
	h.clk.Step(fastStatusUpdatePeriod) // far less than the 10s update frequency
	h.wait(eventSynced)
	if c := mustCondition(t, h.node(), corev1.NodeReady); c.Status != corev1.ConditionTrue {
		t.Fatalf("Ready = %s 100ms after the agent became ready, want True", c.Status)
	}
	if got := h.statusPosts(); got != 2 {
		t.Fatalf("%d status posts, want 2", got)
	}
	// The fast checks ended: the next sync is the normal tick's, and it
	// posts nothing new.
	h.tick()
	if got := h.statusPosts(); got != 2 {
		t.Errorf("%d status posts after an unchanged tick, want 2", got)
	}
}

func TestFastUpdatesEndAfterTheGracePeriod(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	h.health.set(errors.New("runtime down"))
	f := h.r.startFastUpdates()
	if f.c == nil {
		t.Fatal("no fast updates for a node never posted Ready")
	}
	h.clk.Step(nodeReadyGracePeriod - time.Second)
	if h.r.fastUpdateDue(f) || f.c == nil {
		t.Fatal("an unready agent within the grace period: want no post and the watch kept")
	}
	h.health.set(nil)
	if !h.r.fastUpdateDue(f) {
		t.Fatal("a ready agent within the grace period: want a post")
	}
	h.clk.Step(2 * time.Second)
	if h.r.fastUpdateDue(f) || f.c != nil {
		t.Error("past the grace period: want no post and the watch ended")
	}
}
