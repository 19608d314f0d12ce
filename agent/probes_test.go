package agent

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/managers/prober"
	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/sources"
)

// fakeResults is a prober.Results whose updates the test sends.
type fakeResults struct{ ch chan prober.Update }

func (r fakeResults) Get(string) (prober.Result, bool)     { return prober.Unknown, false }
func (r fakeResults) Updates() <-chan prober.Update        { return r.ch }
func newFakeResults() fakeResults                          { return fakeResults{ch: make(chan prober.Update, 10)} }
func (f *fakeProber) Liveness() prober.Results             { return f.live }
func (f *fakeProber) Readiness() prober.Results            { return f.readiness }
func (f *fakeProber) Startup() prober.Results              { return f.startup }
func (f *fakeProber) StopLivenessAndStartup(p *corev1.Pod) { f.note(&f.stopped, p.UID) }

// fakeProber is a prober.Manager and prober.ResultsProvider that records
// what the agent asks and sets Ready from a map.
type fakeProber struct {
	live, readiness, startup fakeResults
	ran                      atomic.Bool

	mu       sync.Mutex
	ready    map[string]bool // by container name
	added    []types.UID
	removed  []types.UID
	stopped  []types.UID
	desired  map[types.UID]bool
	podReady []corev1.ConditionStatus // the pod Ready condition each UpdatePodStatus saw
	started  []bool                   // Started of the first container as passed in
}

func newFakeProber() *fakeProber {
	return &fakeProber{live: newFakeResults(), readiness: newFakeResults(), startup: newFakeResults(), ready: map[string]bool{}}
}

func (f *fakeProber) Run(ctx context.Context) error { f.ran.Store(true); <-ctx.Done(); return nil }
func (f *fakeProber) AddPod(p *corev1.Pod)          { f.note(&f.added, p.UID) }
func (f *fakeProber) RemovePod(p *corev1.Pod)       { f.note(&f.removed, p.UID) }
func (f *fakeProber) CleanupPods(d map[types.UID]bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.desired = d
}
func (f *fakeProber) UpdatePodStatus(pod *corev1.Pod, st *corev1.PodStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cond := corev1.ConditionStatus("")
	if c := findCondition(pod.Status.Conditions, corev1.PodReady); c != nil {
		cond = c.Status
	}
	f.podReady = append(f.podReady, cond)
	if len(st.ContainerStatuses) > 0 && st.ContainerStatuses[0].Started != nil {
		f.started = append(f.started, *st.ContainerStatuses[0].Started)
	}
	for i := range st.ContainerStatuses {
		c := &st.ContainerStatuses[i]
		c.Ready = c.State.Running != nil && f.ready[c.Name]
	}
}

func (f *fakeProber) note(list *[]types.UID, uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	*list = append(*list, uid)
}

func (f *fakeProber) setReady(name string, v bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ready[name] = v
}

var (
	_ prober.Manager         = (*fakeProber)(nil)
	_ prober.ResultsProvider = (*fakeProber)(nil)
)

func newProbedSyncer(t *testing.T, rt noderuntime.Runtime, fp *fakeProber) (*Syncer, *MemoryStatuses) {
	st := NewMemoryStatuses()
	return NewSyncer(rt, st, nil, testingclock.NewFakeClock(t0), testr.New(t), Config{NodeName: "n"}, WithProber(fp)), st
}

func TestSyncerLetsTheProberDecideReadinessBeforeTheConditions(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, "a")
	run := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: readySandbox(), ContainerStatuses: []*noderuntime.ContainerStatus{running("a", 0)}}
	fp := newFakeProber()
	s, st := newProbedSyncer(t, &scriptedRuntime{result: &noderuntime.SyncResult{}}, fp)
	for _, tt := range []struct {
		ready bool
		want  corev1.ConditionStatus
	}{{false, corev1.ConditionFalse}, {true, corev1.ConditionTrue}, {false, corev1.ConditionFalse}} {
		fp.setReady("a", tt.ready)
		if _, err := s.SyncPod(t.Context(), podworkers.SyncPodSync, pod, nil, run); err != nil {
			t.Fatal(err)
		}
		got, _ := st.GetPodStatus(pod.UID)
		if got.ContainerStatuses[0].Ready != tt.ready || findCondition(got.Conditions, corev1.PodReady).Status != tt.want ||
			findCondition(got.Conditions, corev1.ContainersReady).Status != tt.want {
			t.Fatalf("probe ready=%v: status %+v", tt.ready, got)
		}
	}
	if len(fp.added) != 3 || fp.added[0] != pod.UID {
		t.Fatalf("AddPod calls %v, want one per sync", fp.added)
	}
}

func TestProberSeesThePodsLastReadinessAndCarriedStarted(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, "a")
	run := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: readySandbox(), ContainerStatuses: []*noderuntime.ContainerStatus{running("a", 0)}}
	id := running("a", 0).ID.String()
	oldStatus := func(ready corev1.ConditionStatus, containerID string, started bool) *corev1.PodStatus {
		return &corev1.PodStatus{
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "a", ContainerID: containerID, Started: ptrTo(started)}},
		}
	}
	cases := []struct {
		name        string
		stored      *corev1.PodStatus // the agent's last status
		api         *corev1.PodStatus // the pod's own status
		wantReady   corev1.ConditionStatus
		wantStarted bool
	}{
		{name: "a static pod the restarted agent knows nothing of counts as having been ready",
			wantReady: corev1.ConditionTrue, wantStarted: true},
		{name: "the agent's last status gives the readiness and the Started of the same container",
			stored: oldStatus(corev1.ConditionFalse, id, false), wantReady: corev1.ConditionFalse, wantStarted: false},
		{name: "an API pod's own status gives them after a restart",
			api: oldStatus(corev1.ConditionTrue, id, false), wantReady: corev1.ConditionTrue, wantStarted: false},
		{name: "the Started of another instance of the container is not carried",
			api: oldStatus(corev1.ConditionFalse, "containerd://older", false), wantReady: corev1.ConditionFalse, wantStarted: true},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			p := pod.DeepCopy()
			if tt.api != nil {
				p.Status = *tt.api
			}
			fp := newFakeProber()
			s, st := newProbedSyncer(t, &scriptedRuntime{result: &noderuntime.SyncResult{}}, fp)
			if tt.stored != nil {
				st.SetPodStatus(p, tt.stored)
			}
			if _, err := s.SyncPod(t.Context(), podworkers.SyncPodSync, p, nil, run); err != nil {
				t.Fatal(err)
			}
			if fp.podReady[0] != tt.wantReady || len(fp.started) == 0 || fp.started[0] != tt.wantStarted {
				t.Fatalf("prober saw pod Ready %q and Started %v, want %q and %v", fp.podReady[0], fp.started, tt.wantReady, tt.wantStarted)
			}
		})
	}
}

func TestTerminatingPodStopsItsLivenessProbesAndLeavesTheProber(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, "a")
	fp := newFakeProber()
	s, _ := newProbedSyncer(t, &scriptedRuntime{result: &noderuntime.SyncResult{}}, fp)
	if err := s.SyncTerminatingPod(t.Context(), pod, &noderuntime.PodStatus{ID: pod.UID}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(fp.stopped) != 1 || len(fp.removed) != 1 {
		t.Fatalf("StopLivenessAndStartup %v, RemovePod %v; want one each", fp.stopped, fp.removed)
	}
}

func TestProbeResultsSyncTheirPod(t *testing.T) {
	lt := newLoopTest(t, Config{})
	fp := newFakeProber()
	lt.agent.prober = fp
	lt.start()
	lt.waitFor("the agent to run the prober", fp.ran.Load)
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{staticPod("a", "a")}}
	lt.nextCall()
	cases := []struct {
		name   string
		send   chan prober.Update
		update prober.Update
		sync   bool
	}{
		{name: "a liveness failure syncs the pod", send: fp.live.ch,
			update: prober.Update{PodUID: "a", Probe: prober.Liveness, Result: prober.Failure}, sync: true},
		{name: "a liveness success does not", send: fp.live.ch,
			update: prober.Update{PodUID: "a", Probe: prober.Liveness, Result: prober.Success}},
		{name: "a readiness change syncs the pod", send: fp.readiness.ch,
			update: prober.Update{PodUID: "a", Probe: prober.Readiness, Result: prober.Success}, sync: true},
		{name: "a startup change syncs the pod", send: fp.startup.ch,
			update: prober.Update{PodUID: "a", Probe: prober.Startup, Result: prober.Success}, sync: true},
		{name: "a result for a pod the agent does not know is dropped", send: fp.readiness.ch,
			update: prober.Update{PodUID: "gone", Probe: prober.Readiness, Result: prober.Failure}},
	}
	// One loop, no subtests: the loop helpers fail the parent test.
	for _, tt := range cases {
		tt.send <- tt.update
		if !tt.sync {
			lt.noCall()
			continue
		}
		if c := lt.nextCall(); c.UpdateType != podworkers.SyncPodSync || c.Pod.UID != "a" {
			t.Fatalf("%s: call = %s %v, want a sync of a", tt.name, c.UpdateType, c.Pod)
		}
	}
}

func TestHousekeepingStopsProbingPodsThatTerminated(t *testing.T) {
	lt := newLoopTest(t, Config{})
	fp := newFakeProber()
	lt.agent.prober = fp
	lt.workers.known["live"] = podworkers.PodWorkerSync{State: podworkers.SyncPod}
	lt.workers.known["stopping"] = podworkers.PodWorkerSync{State: podworkers.TerminatingPod}
	lt.workers.known["done"] = podworkers.PodWorkerSync{State: podworkers.TerminatedPod}
	lt.config.seen.Store(true)
	lt.start()
	lt.clk.Step(2 * time.Second)
	lt.waitFor("housekeeping to clean up probes", func() bool {
		fp.mu.Lock()
		defer fp.mu.Unlock()
		return fp.desired != nil
	})
	fp.mu.Lock()
	defer fp.mu.Unlock()
	if !fp.desired["live"] || !fp.desired["stopping"] || fp.desired["done"] || len(fp.desired) != 2 {
		t.Fatalf("desired = %v, want live and stopping", fp.desired)
	}
}
