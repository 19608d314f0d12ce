package agent

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/sources"
)

func TestAddStartsWorkersAndAdmissionRejectsBeyondMaxPods(t *testing.T) {
	lt := newLoopTest(t, Config{MaxPods: 1})
	lt.start()
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{staticPod("a", "a"), staticPod("b", "b")}}
	if c := lt.nextCall(); c.UpdateType != podworkers.SyncPodCreate || c.Pod.UID != "a" {
		t.Fatalf("first call = %s %v, want create of a", c.UpdateType, c.Pod.UID)
	}
	lt.noCall()
	st, ok := lt.agent.statuses.GetPodStatus("b")
	if !ok || st.Phase != corev1.PodFailed || st.Reason != reasonOutOfPods || !strings.Contains(st.Message, "capacity: 1") {
		t.Fatalf("rejected pod status = %+v", st)
	}
	if got := len(lt.agent.GetPods()); got != 2 {
		t.Fatalf("GetPods lists %d pods, want both (the rejected one with its status)", got)
	}
}

func TestRemoveKillsThePod(t *testing.T) {
	lt := newLoopTest(t, Config{})
	lt.start()
	pod := staticPod("a", "a")
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{pod}}
	lt.nextCall()
	lt.config.updates <- sources.PodUpdate{Op: sources.REMOVE, Pods: []*corev1.Pod{pod}}
	if c := lt.nextCall(); c.UpdateType != podworkers.SyncPodKill || c.Pod.UID != "a" {
		t.Fatalf("call = %s %v, want kill of a", c.UpdateType, c.Pod)
	}
	if lt.agent.registry.Get("a") != nil {
		t.Fatal("removed pod is still registered")
	}
}

func TestPLEGEventSyncsKnownPodsOnly(t *testing.T) {
	lt := newLoopTest(t, Config{})
	lt.start()
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{staticPod("a", "a")}}
	lt.nextCall()
	events := lt.agent.pleg.(*fakePLEG).events
	events <- &pleg.Event{ID: "unknown", Type: pleg.ContainerDied}
	events <- &pleg.Event{ID: "a", Type: pleg.ContainerDied}
	if c := lt.nextCall(); c.UpdateType != podworkers.SyncPodSync || c.Pod.UID != "a" {
		t.Fatalf("call = %s %v, want sync of a", c.UpdateType, c.Pod)
	}
	lt.noCall()
}

func TestSyncTickSyncsDuePods(t *testing.T) {
	lt := newLoopTest(t, Config{})
	lt.start()
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{staticPod("a", "a")}}
	lt.nextCall()
	lt.queue.mu.Lock()
	lt.queue.due = append(lt.queue.due, "a", "gone")
	lt.queue.mu.Unlock()
	lt.clk.Step(time.Second)
	if c := lt.nextCall(); c.UpdateType != podworkers.SyncPodSync || c.Pod.UID != "a" {
		t.Fatalf("call = %s %v, want sync of a", c.UpdateType, c.Pod)
	}
}

func TestHousekeepingKillsOrphansOnlyAfterAllSourcesWereSeen(t *testing.T) {
	lt := newLoopTest(t, Config{})
	orphan := &noderuntime.Pod{ID: "orphan", Name: "old", Namespace: "default"}
	wanted := &noderuntime.Pod{ID: "a", Name: "a", Namespace: "default"}
	lt.rt.pods = []*noderuntime.Pod{orphan, wanted}
	lt.start()
	lt.clk.Step(2 * time.Second) // housekeeping before any source spoke
	// The pass is over (skipped, or done with every kill it would make)
	// before noCall looks: without the gate both pods would be killed.
	lt.waitHousekeepings(1)
	lt.noCall()
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{staticPod("a", "a")}}
	lt.nextCall()
	lt.config.seen.Store(true)
	lt.clk.Step(2 * time.Second)
	lt.waitHousekeepings(2)
	c := lt.nextCall()
	if c.UpdateType != podworkers.SyncPodKill || c.RunningPod != orphan {
		t.Fatalf("call = %s pod %v running %v, want kill of the orphan", c.UpdateType, c.Pod, c.RunningPod)
	}
	lt.noCall()
}

func TestEditedStaticPodWaitsForItsPredecessor(t *testing.T) {
	lt := newLoopTest(t, Config{})
	lt.start()
	old, edited := staticPod("v1", "web"), staticPod("v2", "web")
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{old}}
	lt.nextCall()
	lt.workers.setRunning("v1", true)
	lt.config.updates <- sources.PodUpdate{Op: sources.REMOVE, Pods: []*corev1.Pod{old}}
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{edited}}
	if c := lt.nextCall(); c.UpdateType != podworkers.SyncPodKill || c.Pod.UID != "v1" {
		t.Fatalf("call = %s %v, want kill of v1", c.UpdateType, c.Pod)
	}
	lt.noCall() // v2 waits while v1 may still run
	lt.workers.setRunning("v1", false)
	lt.clk.Step(time.Second)
	if c := lt.nextCall(); c.UpdateType != podworkers.SyncPodCreate || c.Pod.UID != "v2" {
		t.Fatalf("call = %s %v, want create of v2", c.UpdateType, c.Pod)
	}
}

func TestHealthChecks(t *testing.T) {
	lt := newLoopTest(t, Config{})
	checks := map[string]Check{}
	for _, c := range lt.agent.HealthChecks() {
		checks[c.Name()] = c
	}
	if err := checks["runtime"].Check(); err == nil {
		t.Fatal("runtime check passed before the runtime was checked")
	}
	lt.start()
	lt.waitFor("the runtime check", func() bool { return checks["runtime"].Check() == nil })
	lt.rt.mu.Lock()
	lt.rt.statusErr = errBoom
	lt.rt.mu.Unlock()
	lt.clk.Step(5 * time.Second)
	lt.waitFor("the runtime check to fail", func() bool {
		err := checks["runtime"].Check()
		return err != nil && strings.Contains(err.Error(), "boom")
	})
	if err := checks["pleg"].Check(); err != nil {
		t.Fatalf("pleg check: %v", err)
	}
	lt.stop()
	lt.clk.Step(6 * time.Minute)
	if err := checks["syncloop"].Check(); err == nil {
		t.Fatal("syncloop check passed although the loop stopped 6 minutes ago")
	}
}

func TestRunReturnsTheFirstSubsystemError(t *testing.T) {
	lt := newLoopTest(t, Config{})
	lt.config.err = errBoom
	ctxErr := make(chan error, 1)
	go func() { ctxErr <- lt.agent.Run(t.Context()) }()
	select {
	case err := <-ctxErr:
		if err == nil || !strings.Contains(err.Error(), "pod config: boom") {
			t.Fatalf("Run = %v, want the pod config's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after a subsystem failed")
	}
}
