package nodestatus

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
)

var nodesResource = schema.GroupResource{Resource: "nodes"}

func TestRunRegistersNode(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{NodeName: "node-1", NodeIP: "127.0.0.1", Labels: map[string]string{"example.com/pool": "a"}})
	h.start()
	h.wait(eventSynced)

	n := h.node()
	wantLabels := map[string]string{
		"kubernetes.io/hostname": "node-1", "kubernetes.io/os": "linux", "kubernetes.io/arch": n.Status.NodeInfo.Architecture,
		"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": n.Status.NodeInfo.Architecture, "example.com/pool": "a",
	}
	for k, v := range wantLabels {
		if n.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
		}
	}
	want := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: "node-1"}}
	if len(n.Status.Addresses) != 2 || n.Status.Addresses[0] != want[0] || n.Status.Addresses[1] != want[1] {
		t.Errorf("addresses %v, want %v", n.Status.Addresses, want)
	}
	checkCapacityAndInfo(t, n)
	if c := mustCondition(t, n, corev1.NodeReady); c.Status != corev1.ConditionTrue || c.Reason != ReasonReady {
		t.Errorf("Ready = %s %s, want True %s", c.Status, c.Reason, ReasonReady)
	}
	if got := h.count("create", "nodes", ""); got != 1 {
		t.Errorf("%d node creates, want 1", got)
	}
	if got := h.r.Node(); got == nil || got.UID != n.UID {
		t.Errorf("Node() = %v, want the posted node", got)
	}
}

func TestRunUpdatesExistingNode(t *testing.T) {
	t.Parallel()
	existing := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "old-uid", Labels: map[string]string{
			"kubernetes.io/hostname": "stale", "example.com/keep": "yes",
		}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse, Reason: "RouteCreated"},
			{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown"},
		}},
	}
	h := newHarness(t, Config{NodeName: "node-1"}, existing)
	h.start()
	h.wait(eventSynced)

	n := h.node()
	if n.UID != "old-uid" {
		t.Errorf("UID %s: the node was recreated", n.UID)
	}
	if n.Labels["kubernetes.io/hostname"] != "node-1" || n.Labels["example.com/keep"] != "yes" || n.Labels["kubernetes.io/os"] != "linux" {
		t.Errorf("labels %v: want hostname fixed, os added, others kept", n.Labels)
	}
	if c := mustCondition(t, n, corev1.NodeNetworkUnavailable); c.Reason != "RouteCreated" {
		t.Errorf("NetworkUnavailable = %+v, want it kept", c)
	}
	if c := mustCondition(t, n, corev1.NodeReady); c.Status != corev1.ConditionTrue {
		t.Errorf("Ready = %s, want True", c.Status)
	}
	checkCapacityAndInfo(t, n)
	if got := h.count("delete", "nodes", ""); got != 0 {
		t.Errorf("%d node deletes, want 0", got)
	}
}

func TestStatusPostCadence(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	h.start()
	h.wait(eventSynced)
	if got := h.statusPosts(); got != 1 {
		t.Fatalf("%d status posts after registration, want 1", got)
	}
	first := mustCondition(t, h.node(), corev1.NodeReady).LastHeartbeatTime
	for i := 1; i < 30; i++ { // 290s: less than the 5m report frequency
		h.tick()
	}
	if got := h.statusPosts(); got != 1 {
		t.Fatalf("%d status posts while nothing changed for 290s, want 1", got)
	}
	h.tick() // 300s
	if got := h.statusPosts(); got != 2 {
		t.Fatalf("%d status posts at the report frequency, want 2", got)
	}
	c := mustCondition(t, h.node(), corev1.NodeReady)
	if !c.LastHeartbeatTime.After(first.Time) || !c.LastTransitionTime.Equal(&first) {
		t.Errorf("Ready heartbeat %v (first %v), transition %v: want heartbeat advanced, transition kept", c.LastHeartbeatTime, first, c.LastTransitionTime)
	}
}

func TestConditionChangePostsAtNextTick(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	h.start()
	h.wait(eventSynced)

	h.health.set(errors.New("container runtime is down"))
	h.tick()
	if got := h.statusPosts(); got != 2 {
		t.Fatalf("%d status posts after the agent became unhealthy, want 2", got)
	}
	c := mustCondition(t, h.node(), corev1.NodeReady)
	if c.Status != corev1.ConditionFalse || c.Reason != ReasonNotReady || c.Message != "container runtime is down" {
		t.Errorf("Ready = %+v, want False %s with the health message", c, ReasonNotReady)
	}
	if !c.LastTransitionTime.Time.Equal(h.clk.Now()) {
		t.Errorf("Ready transition %v, want now %v", c.LastTransitionTime, h.clk.Now())
	}

	h.machine.setUsage(&Usage{MemoryAvailableBytes: 1 << 20})
	h.health.set(nil)
	h.tick()
	if got := h.statusPosts(); got != 3 {
		t.Fatalf("%d status posts after recovery, want 3", got)
	}
	n := h.node()
	if c := mustCondition(t, n, corev1.NodeReady); c.Status != corev1.ConditionTrue {
		t.Errorf("Ready = %s, want True", c.Status)
	}
	if c := mustCondition(t, n, corev1.NodeMemoryPressure); c.Status != corev1.ConditionTrue || c.Reason != ReasonInsufficientMemory {
		t.Errorf("MemoryPressure = %s %s, want True %s", c.Status, c.Reason, ReasonInsufficientMemory)
	}
	h.tick()
	if got := h.statusPosts(); got != 3 {
		t.Errorf("%d status posts after an unchanged tick, want 3", got)
	}
}

// failN makes the first n actions of verb on resource fail with err.
func failN(h *harness, verb, resource, subresource string, n int, err error) {
	h.client.PrependReactor(verb, resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != subresource || n == 0 {
			return false, nil, nil
		}
		n--
		return true, nil, err
	})
}

func TestStatusConflictsAreRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	failN(h, "patch", "nodes", "status", 2, apierrors.NewConflict(nodesResource, "node-1", errors.New("changed")))
	h.start()
	h.wait(eventSynced)
	if got := h.statusPosts(); got != 3 {
		t.Errorf("%d status patches, want 3 (two conflicts, one success)", got)
	}
	if got := h.count("get", "nodes", ""); got != 3 {
		t.Errorf("%d node gets, want one per attempt (3)", got)
	}
	if h.r.Node() == nil || condition(h.r.Node(), corev1.NodeReady) == nil {
		t.Errorf("Node() = %v, want the posted status", h.r.Node())
	}
}

func TestUnreachableAPIServerNeverStopsReporter(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	failN(h, "get", "nodes", "", -1, apierrors.NewServiceUnavailable("apiserver is down"))
	h.start()
	h.wait(eventSynced)
	if got := h.count("get", "nodes", ""); got != nodeStatusUpdateRetry {
		t.Errorf("%d node gets in one sync, want %d", got, nodeStatusUpdateRetry)
	}
	h.tick()
	h.tick()
	if got := h.count("get", "nodes", ""); got != 3*nodeStatusUpdateRetry {
		t.Errorf("%d node gets in three syncs, want %d", got, 3*nodeStatusUpdateRetry)
	}
	if got := h.statusPosts(); got != 0 {
		t.Errorf("%d status posts without a node to read, want 0", got)
	}
	h.stop() // Run returns nil
}

func TestRegistrationIsRetriedWithBackoff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	failN(h, "create", "nodes", "", 3, apierrors.NewInternalError(errors.New("etcd is down")))
	h.start()
	for i, backoff := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
		h.wait(eventBackoff)
		h.clk.Step(backoff - time.Millisecond)
		if got := h.count("create", "nodes", ""); got != i+1 || !h.clk.HasWaiters() {
			t.Fatalf("%d node creates before the %s backoff ended, want %d", got, backoff, i+1)
		}
		h.clk.Step(time.Millisecond)
	}
	h.wait(eventSynced)
	if got := h.count("create", "nodes", ""); got != 4 {
		t.Errorf("%d node creates, want 4", got)
	}
	if got := h.statusPosts(); got != 1 {
		t.Errorf("%d status posts, want 1", got)
	}
}

func TestRunStopsWhileRegistrationFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	failN(h, "create", "nodes", "", -1, apierrors.NewForbidden(nodesResource, "node-1", errors.New("no")))
	h.start()
	h.wait(eventBackoff)
	h.clk.Step(registerInitialBackoff)
	h.wait(eventBackoff)
	h.stop()
}

func TestDeletedNodeIsRegisteredAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	h.start()
	h.wait(eventSynced)
	if err := h.client.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("nodes"), "", "node-1"); err != nil {
		t.Fatal(err)
	}
	h.tick() // finds the node gone
	h.tick() // registers it again and posts
	if got := h.count("create", "nodes", ""); got != 2 {
		t.Errorf("%d node creates, want 2", got)
	}
	if c := mustCondition(t, h.node(), corev1.NodeReady); c.Status != corev1.ConditionTrue {
		t.Errorf("Ready = %s, want True", c.Status)
	}
}

func TestRunRejectsInvalidConfig(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{NodeName: "Not_A_Name"})
	if err := h.r.Run(t.Context()); err == nil {
		t.Error("Run with an invalid node name returned nil")
	}
}

func TestCachedNotFoundAfterRegistrationIsReadAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	failN(h, "get", "nodes", "", 1, apierrors.NewNotFound(nodesResource, "node-1"))
	h.start()
	h.wait(eventSynced)
	if got := h.count("create", "nodes", ""); got != 1 {
		t.Errorf("%d node creates, want 1: a stale cache is not a deleted node", got)
	}
	if got := h.statusPosts(); got != 1 {
		t.Errorf("%d status posts, want 1", got)
	}
}

// notifyingHealth is a fakeHealth that is also a HealthNotifier.
type notifyingHealth struct {
	*fakeHealth
	ch chan struct{}
}

func (n notifyingHealth) HealthChanged() <-chan struct{} { return n.ch }

func TestHealthChangePostsAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	health := notifyingHealth{fakeHealth: h.health, ch: make(chan struct{}, 1)}
	h.r = New(h.client, h.machine, h.rt, health, h.clk, testr.New(t), Config{NodeName: "node-1"})
	h.start()
	h.wait(eventSynced)

	h.health.set(errors.New("runtime: container runtime did not answer a status check within 2s"))
	health.ch <- struct{}{}
	h.wait(eventSynced) // no tick: the clock has not moved
	if got := h.statusPosts(); got != 2 {
		t.Fatalf("%d status posts after the health change, want 2", got)
	}
	if c := mustCondition(t, h.node(), corev1.NodeReady); c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "did not answer") {
		t.Errorf("Ready = %s %q, want False with the health message", c.Status, c.Message)
	}
}

func TestUnhealthyAgentPostsWithoutAskingTheRuntimeItsVersion(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	h.start()
	h.wait(eventSynced)
	base := h.rt.versionCalls()
	h.health.set(errors.New("runtime: container runtime did not answer a status check within 2s"))
	h.tick()
	if n := h.rt.versionCalls(); n != base {
		t.Errorf("%d Version calls while unhealthy, want still %d: a hung runtime would hold the post", n, base)
	}
	n := h.node()
	if c := mustCondition(t, n, corev1.NodeReady); c.Status != corev1.ConditionFalse {
		t.Errorf("Ready = %s, want False", c.Status)
	}
	if v := n.Status.NodeInfo.ContainerRuntimeVersion; v != "containerd://2.4.2" {
		t.Errorf("containerRuntimeVersion %q, want the last known one", v)
	}
	h.health.set(nil)
	h.tick()
	if n := h.rt.versionCalls(); n != base+1 {
		t.Errorf("%d Version calls once healthy again, want %d", n, base+1)
	}
}
