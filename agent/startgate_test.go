package agent

import (
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/podworkers"
	"github.com/nodekit/nodekit/sources"
)

// oneAtATime orders by name, descending, and lets a pod go only while no
// other pod is starting.
type oneAtATime struct{ asked int }

func (g *oneAtATime) Order(pods []*corev1.Pod) {
	for i := range pods {
		for j := i + 1; j < len(pods); j++ {
			if pods[j].Name > pods[i].Name {
				pods[i], pods[j] = pods[j], pods[i]
			}
		}
	}
}

func (g *oneAtATime) Ready(waiting []*corev1.Pod, s StartState) []*corev1.Pod {
	g.asked++
	if len(s.Starting) > 0 {
		return nil
	}
	return waiting[:1]
}

func TestTheStartGateOrdersTheBatchAndHoldsPodsUntilItLetsThemGo(t *testing.T) {
	lt := newLoopTest(t, Config{})
	gate := &oneAtATime{}
	lt.agent.gate = gate
	lt.start()
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{staticPod("a", "a"), staticPod("c", "c"), staticPod("b", "b")}}
	for _, want := range []types.UID{"c", "b", "a"} {
		call := lt.nextCall()
		if call.UpdateType != podworkers.SyncPodCreate || call.Pod.UID != want {
			t.Fatalf("call = %s %v, want create of %s", call.UpdateType, call.Pod.UID, want)
		}
		lt.noCall() // the others wait while this one starts
		if !lt.agent.isPending(want) && lt.agent.isWaiting(want) {
			t.Fatalf("pod %s still waits after it was started", want)
		}
		// The pod runs: the next sync tick lets the next one go.
		lt.agent.statuses.SetPodStatus(call.Pod, &corev1.PodStatus{Phase: corev1.PodRunning})
		lt.clk.Step(time.Second)
	}
	lt.noCall()
	if gate.asked < 3 {
		t.Fatalf("the gate was asked %d times, want at least once per pod", gate.asked)
	}
}

func TestAWaitingPodIsNotSyncedAndAPLEGEventReleasesIt(t *testing.T) {
	lt := newLoopTest(t, Config{})
	lt.agent.gate = &oneAtATime{}
	lt.start()
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{staticPod("a", "a"), staticPod("b", "b")}}
	first := lt.nextCall()
	if first.Pod.UID != "b" {
		t.Fatalf("first start = %v, want b", first.Pod.UID)
	}
	// An update of the waiting pod only records its new spec.
	newer := staticPod("a", "a")
	newer.Labels = map[string]string{"v": "2"}
	lt.config.updates <- sources.PodUpdate{Op: sources.UPDATE, Pods: []*corev1.Pod{newer}}
	lt.noCall()
	if st := lt.agent.startState(0); st.Active != 1 || len(st.Starting) != 1 {
		t.Fatalf("start state = %+v, want b starting", st)
	}
	lt.agent.statuses.SetPodStatus(first.Pod, &corev1.PodStatus{Phase: corev1.PodRunning})
	lt.agent.pleg.(*fakePLEG).events <- &pleg.Event{ID: "b", Type: pleg.ContainerStarted}
	if call := lt.nextCall(); call.Pod.UID != "b" || call.UpdateType != podworkers.SyncPodSync {
		t.Fatalf("call = %s %v, want the sync of b", call.UpdateType, call.Pod.UID)
	}
	call := lt.nextCall()
	if call.Pod.UID != "a" || call.UpdateType != podworkers.SyncPodCreate || call.Pod.Labels["v"] != "2" {
		t.Fatalf("call = %s %v %v, want the create of a with its newest spec", call.UpdateType, call.Pod.UID, call.Pod.Labels)
	}
}

func TestARemovedWaitingPodNeverStartsAndADeletedOneGoesToItsWorker(t *testing.T) {
	lt := newLoopTest(t, Config{})
	lt.agent.gate = &oneAtATime{}
	lt.start()
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{staticPod("a", "a"), staticPod("b", "b"), staticPod("c", "c")}}
	if call := lt.nextCall(); call.Pod.UID != "c" {
		t.Fatalf("first start = %v, want c", call.Pod.UID)
	}
	lt.config.updates <- sources.PodUpdate{Op: sources.REMOVE, Pods: []*corev1.Pod{staticPod("b", "b")}}
	if call := lt.nextCall(); call.Pod.UID != "b" || call.UpdateType != podworkers.SyncPodKill {
		t.Fatalf("call = %s %v, want the kill of b", call.UpdateType, call.Pod.UID)
	}
	deleted := staticPod("a", "a")
	deleted.DeletionTimestamp = &metav1.Time{Time: t0}
	lt.config.updates <- sources.PodUpdate{Op: sources.DELETE, Pods: []*corev1.Pod{deleted}}
	if call := lt.nextCall(); call.Pod.UID != "a" || call.UpdateType != podworkers.SyncPodCreate || call.Pod.DeletionTimestamp == nil {
		t.Fatalf("call = %s %v, want a's worker to get the deleted pod", call.UpdateType, call.Pod.UID)
	}
	if lt.agent.isWaiting("a") || lt.agent.isWaiting("b") {
		t.Fatal("a removed or deleted pod still waits at the gate")
	}
	lt.noCall()
}

func TestAPodKilledWhileItWaitsNeverStartsButAManifestPutBackDoes(t *testing.T) {
	lt := newLoopTest(t, Config{})
	lt.agent.gate = &oneAtATime{}
	lt.start()
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{staticPod("a", "a"), staticPod("b", "b")}}
	first := lt.nextCall()
	if first.Pod.UID != "b" {
		t.Fatalf("first start = %v, want b", first.Pod.UID)
	}
	// The eviction manager (or a node shutdown) kills the waiting a
	// through the pod workers, not through the agent.
	lt.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodKill, Pod: staticPod("a", "a")})
	if call := lt.nextCall(); call.Pod.UID != "a" || call.UpdateType != podworkers.SyncPodKill {
		t.Fatalf("call = %s %v, want the kill of a", call.UpdateType, call.Pod.UID)
	}
	lt.agent.statuses.SetPodStatus(first.Pod, &corev1.PodStatus{Phase: corev1.PodRunning})
	lt.clk.Step(time.Second)
	lt.noCall() // a create now would restart a pod that ended Failed
	if lt.agent.isWaiting("a") {
		t.Fatal("the killed pod a still waits at the gate")
	}
	// b is removed while it runs and its manifest put back (same UID): it
	// waits at the gate and then starts again, as a restart request.
	lt.config.updates <- sources.PodUpdate{Op: sources.REMOVE, Pods: []*corev1.Pod{staticPod("b", "b")}}
	if call := lt.nextCall(); call.Pod.UID != "b" || call.UpdateType != podworkers.SyncPodKill {
		t.Fatalf("call = %s %v, want the kill of b", call.UpdateType, call.Pod.UID)
	}
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{staticPod("b", "b")}}
	if call := lt.nextCall(); call.Pod.UID != "b" || call.UpdateType != podworkers.SyncPodCreate {
		t.Fatalf("call = %s %v, want b created again", call.UpdateType, call.Pod.UID)
	}
}

func TestFIFOStartAdmitsOldestFirstAndStartsEveryPodAtOnce(t *testing.T) {
	old, young := staticPod("y", "y"), staticPod("o", "o")
	old.CreationTimestamp = metav1.Time{Time: t0.Add(time.Minute)}
	young.CreationTimestamp = metav1.Time{Time: t0}
	pods := []*corev1.Pod{old, young}
	FIFOStart{}.Order(pods)
	if pods[0].UID != "o" {
		t.Fatalf("order = %v, %v; want the older o first", pods[0].UID, pods[1].UID)
	}
	if got := (FIFOStart{}).Ready(pods, StartState{Starting: pods}); len(got) != 2 {
		t.Fatalf("Ready = %d pods, want both", len(got))
	}
}

// deviceGate holds every pod until its device is there, and asks to be
// asked again when it comes.
type deviceGate struct {
	present atomic.Bool
	wake    chan struct{}
}

func (g *deviceGate) Order(pods []*corev1.Pod) { FIFOStart{}.Order(pods) }

func (g *deviceGate) Ready(waiting []*corev1.Pod, _ StartState) []*corev1.Pod {
	if !g.present.Load() {
		return nil
	}
	return waiting
}

func (g *deviceGate) Wake() <-chan struct{} { return g.wake }

func TestAStartGateWakerLetsItsPodGoWhenItAsksNotAtTheNextTick(t *testing.T) {
	lt := newLoopTest(t, Config{})
	gate := &deviceGate{wake: make(chan struct{}, 1)}
	lt.agent.gate = gate
	lt.start()
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{staticPod("a", "a")}}
	lt.noCall()
	// The device comes; the clock does not move, so no sync tick or
	// housekeeping can be what releases the pod.
	gate.present.Store(true)
	gate.wake <- struct{}{}
	if call := lt.nextCall(); call.UpdateType != podworkers.SyncPodCreate || call.Pod.UID != "a" {
		t.Fatalf("call = %s %v, want create of a", call.UpdateType, call.Pod.UID)
	}
}
