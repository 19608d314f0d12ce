package nodestatus

import (
	"errors"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// fakeGate is a ReadyGate the test flips.
type fakeGate struct {
	mu      sync.Mutex
	err     error
	changed chan struct{}
}

func (g *fakeGate) NotReady() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

func (g *fakeGate) Changed() <-chan struct{} { return g.changed }

func (g *fakeGate) set(err error) {
	g.mu.Lock()
	g.err = err
	g.mu.Unlock()
	g.changed <- struct{}{}
}

func TestReadyGatePostsNotReadyAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	gate := &fakeGate{changed: make(chan struct{}, 1)}
	h.r.SetReadyGate(gate)
	h.start()
	h.wait(eventSynced)
	if c := mustCondition(t, h.node(), corev1.NodeReady); c.Status != corev1.ConditionTrue {
		t.Fatalf("Ready = %+v before the gate closed", c)
	}

	gate.set(errors.New("node is shutting down"))
	h.wait(eventSynced) // without a tick: the gate's change posts at once
	c := mustCondition(t, h.node(), corev1.NodeReady)
	if c.Status != corev1.ConditionFalse || c.Reason != ReasonNotReady || c.Message != "node is shutting down" {
		t.Errorf("Ready = %+v, want False %s \"node is shutting down\"", c, ReasonNotReady)
	}

	h.health.set(errors.New("container runtime is down"))
	h.tick()
	if c := mustCondition(t, h.node(), corev1.NodeReady); c.Message != "container runtime is down,node is shutting down" {
		t.Errorf("Ready message %q, want the health then the gate", c.Message)
	}
}
