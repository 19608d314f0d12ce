package pleg

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	testingclock "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// t0 is a moment of the fake clock's past; events happen after it.
var t0 = epoch.Add(-time.Minute)

func past(d time.Duration) time.Time { return t0.Add(d) }

func TestEventedAppliesEventsWithoutCallingTheRuntime(t *testing.T) {
	t.Parallel()
	e, _, rt, _, cache := newTestEvented(t, Config{})
	ctx := context.Background()
	s := &fakeSnap{uid: "a", sandbox: "s1", ready: true, created: past(0)}
	steps := []struct {
		name      string
		ev        func() *runtimeapi.ContainerEventResponse
		wantState map[string]noderuntime.ContainerState
		wantAt    time.Time
		wantEv    []Event
	}{
		{
			name:   "the sandbox's start gives ContainerStarted for it, stamped with its creation",
			ev:     func() *runtimeapi.ContainerEventResponse { return event(evStarted, "s1", s, past(time.Second)) },
			wantAt: past(0), wantEv: []Event{{"a", ContainerStarted, "s1"}},
		},
		{
			name: "a container's creation gives no event",
			ev: func() *runtimeapi.ContainerEventResponse {
				s.ctrs = []fakeCtr{{id: "c1", state: criNew, created: past(2 * time.Second)}}
				return event(evCreated, "c1", s, past(3*time.Second))
			},
			wantState: map[string]noderuntime.ContainerState{"c1": crtd}, wantAt: past(2 * time.Second),
		},
		{
			name: "its start gives ContainerStarted, stamped with StartedAt",
			ev: func() *runtimeapi.ContainerEventResponse {
				s.ctrs = []fakeCtr{{id: "c1", state: criRun, created: past(2 * time.Second), started: past(4 * time.Second)}}
				return event(evStarted, "c1", s, past(5*time.Second))
			},
			wantState: map[string]noderuntime.ContainerState{"c1": run}, wantAt: past(4 * time.Second),
			wantEv: []Event{{"a", ContainerStarted, "c1"}},
		},
		{
			name: "its exit gives ContainerDied, stamped with FinishedAt",
			ev: func() *runtimeapi.ContainerEventResponse {
				s.ctrs = []fakeCtr{{id: "c1", state: criExit, created: past(2 * time.Second), started: past(4 * time.Second), finished: past(6 * time.Second)}}
				return event(evStopped, "c1", s, past(7*time.Second))
			},
			wantState: map[string]noderuntime.ContainerState{"c1": exit}, wantAt: past(6 * time.Second),
			wantEv: []Event{{"a", ContainerDied, "c1"}},
		},
		{
			name: "its removal gives ContainerRemoved and keeps the entry's time",
			ev: func() *runtimeapi.ContainerEventResponse {
				s.ctrs = nil
				return event(evDeleted, "c1", s, past(8*time.Second))
			},
			wantState: map[string]noderuntime.ContainerState{}, wantAt: past(6 * time.Second),
			wantEv: []Event{{"a", ContainerRemoved, "c1"}},
		},
	}
	for _, st := range steps {
		e.handle(ctx, st.ev())
		status, stamp, err := cache.Entry("a")
		if err != nil {
			t.Fatalf("%s: entry error %v", st.name, err)
		}
		if got := containerStates(status); st.wantState != nil && !reflect.DeepEqual(got, st.wantState) {
			t.Errorf("%s: containers %v, want %v", st.name, got, st.wantState)
		}
		if !stamp.Equal(st.wantAt) {
			t.Errorf("%s: entry stamped %v, want %v", st.name, stamp, st.wantAt)
		}
		if got := drain(e.Watch()); !reflect.DeepEqual(got, st.wantEv) {
			t.Errorf("%s: events %v, want %v", st.name, got, st.wantEv)
		}
		if status.IPs == nil || status.IPs[0] != "10.0.0.1" {
			t.Errorf("%s: IPs %v, want the ready sandbox's", st.name, status.IPs)
		}
	}
	if n := rt.inspections(); n != 0 {
		t.Errorf("the runtime was inspected %d times; events carry the status", n)
	}
	if e.EventsReceived() != uint64(len(steps)) {
		t.Errorf("EventsReceived() = %d, want %d", e.EventsReceived(), len(steps))
	}
}

func containerStates(s *noderuntime.PodStatus) map[string]noderuntime.ContainerState {
	out := map[string]noderuntime.ContainerState{}
	for _, c := range s.ContainerStatuses {
		out[c.ID.ID] = c.State
	}
	return out
}

func TestEventedLateAndForeignEvents(t *testing.T) {
	t.Parallel()
	running := &fakeSnap{uid: "a", sandbox: "s1", ready: true, created: past(0),
		ctrs: []fakeCtr{{id: "c1", state: criRun, created: past(time.Second), started: past(2 * time.Second)}}}
	exited := &fakeSnap{uid: "a", sandbox: "s1", ready: true, created: past(0),
		ctrs: []fakeCtr{{id: "c1", state: criExit, created: past(time.Second), started: past(2 * time.Second), finished: past(5 * time.Second)}}}
	withNew := &fakeSnap{uid: "a", sandbox: "s1", ready: true, created: past(0),
		ctrs: []fakeCtr{{id: "c1", state: criRun, created: past(time.Second), started: past(2 * time.Second)},
			{id: "c2", state: criNew, created: past(3 * time.Second)}}}
	tests := []struct {
		name            string
		events          []*runtimeapi.ContainerEventResponse
		wantInspections int
		wantStates      map[string]noderuntime.ContainerState
		wantLastEvents  []Event
	}{
		{
			name:           "a late event that shows nothing new is dropped",
			events:         []*runtimeapi.ContainerEventResponse{event(evStopped, "c1", exited, past(6*time.Second)), event(evStarted, "c1", running, past(3*time.Second))},
			wantStates:     map[string]noderuntime.ContainerState{"c1": exit},
			wantLastEvents: nil,
		},
		{
			name:            "a late event that shows news gets the pod inspected",
			events:          []*runtimeapi.ContainerEventResponse{event(evStopped, "c1", exited, past(6*time.Second)), event(evCreated, "c2", withNew, past(4*time.Second))},
			wantInspections: 1,
		},
		{
			name:           "another client's event is ignored",
			events:         []*runtimeapi.ContainerEventResponse{event(evStarted, "x", &fakeSnap{uid: "b", sandbox: "x", ready: true, foreign: true}, past(time.Second))},
			wantLastEvents: nil,
		},
		{
			name:           "a deletion without a sandbox status about an unknown object is ignored",
			events:         []*runtimeapi.ContainerEventResponse{event(evDeleted, "zz", nil, past(time.Second))},
			wantLastEvents: nil,
		},
		{
			name: "a deletion without a sandbox status removes a known sandbox and forgets the pod",
			events: []*runtimeapi.ContainerEventResponse{
				event(evStarted, "s1", &fakeSnap{uid: "a", sandbox: "s1", ready: true, created: past(0)}, past(time.Second)),
				event(evStopped, "s1", &fakeSnap{uid: "a", sandbox: "s1", created: past(0)}, past(2*time.Second)),
				event(evDeleted, "s1", nil, past(3*time.Second)),
			},
			wantStates:     map[string]noderuntime.ContainerState{},
			wantLastEvents: []Event{{"a", ContainerRemoved, "s1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, _, rt, _, cache := newTestEvented(t, Config{})
			var last []Event
			for _, ev := range tt.events {
				e.handle(context.Background(), ev)
				last = drain(e.Watch())
			}
			if n := rt.inspections(); n != tt.wantInspections {
				t.Errorf("inspections = %d, want %d", n, tt.wantInspections)
			}
			if n := e.EventInspections(); n != uint64(tt.wantInspections) {
				t.Errorf("EventInspections() = %d, want %d: every inspection here is on an event", n, tt.wantInspections)
			}
			if tt.wantStates != nil {
				s, _ := cache.Get("a")
				if got := containerStates(s); !reflect.DeepEqual(got, tt.wantStates) {
					t.Errorf("containers %v, want %v", got, tt.wantStates)
				}
			}
			if tt.wantInspections == 0 && !reflect.DeepEqual(last, tt.wantLastEvents) {
				t.Errorf("events of the last event %v, want %v", last, tt.wantLastEvents)
			}
		})
	}
}

func TestEventedCountsWhatTheStreamMissed(t *testing.T) {
	t.Parallel()
	listed := pod("a", ctr("c1", run), sandbox("s1", run))
	tests := []struct {
		name        string
		openedLate  bool // the stream opened after the first relist
		lateEvents  bool // the changes' events arrive after the relist
		wantMissed  uint64
		wantSuspect int
	}{
		{name: "changes no event reported count once the grace period passed", wantMissed: 2},
		{name: "changes whose events arrive late do not count", lateEvents: true},
		{name: "changes found after the stream reopened do not count", openedLate: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, _, rt, clk, _ := newTestEvented(t, Config{})
			ctx := context.Background()
			if !tt.openedLate {
				e.setConnected(clk.Now())
			}
			e.relist(ctx, reasonInitial)
			clk.Step(time.Second)
			if tt.openedLate {
				e.setConnected(clk.Now())
			}
			rt.setPods(listed)
			e.relist(ctx, reasonReconcile)
			if tt.lateEvents {
				s := &fakeSnap{uid: "a", sandbox: "s1", ready: true, created: past(0),
					ctrs: []fakeCtr{{id: "c1", state: criRun, created: past(0), started: past(time.Second)}}}
				e.handle(ctx, event(evStarted, "s1", s, past(time.Second)))
				e.handle(ctx, event(evStarted, "c1", s, past(time.Second)))
			}
			clk.Step(missedGrace)
			e.relist(ctx, reasonReconcile)
			if got := e.MissedEvents(); got != tt.wantMissed {
				t.Errorf("MissedEvents() = %d, want %d", got, tt.wantMissed)
			}
		})
	}
}

func TestEventedRelistIsCorrectByItself(t *testing.T) {
	t.Parallel()
	e, _, rt, clk, cache := newTestEvented(t, Config{})
	ctx := context.Background()
	rt.setPods(pod("a", ctr("c1", run), sandbox("s1", run)))
	rt.statuses["a"] = &noderuntime.PodStatus{ID: "a", Name: "pod-a", Namespace: "default",
		ContainerStatuses: []*noderuntime.ContainerStatus{{ID: noderuntime.ContainerID{Type: "fake", ID: "c1"}, State: run}},
		SandboxStatuses:   []*runtimeapi.PodSandboxStatus{{Id: "s1", State: runtimeapi.PodSandboxState_SANDBOX_READY}}}
	e.relist(ctx, reasonInitial)
	if got := drain(e.Watch()); len(got) != 2 {
		t.Errorf("events of a new pod = %v, want its container's and sandbox's starts", got)
	}
	if !cache.Timestamp().Equal(clk.Now()) {
		t.Errorf("global timestamp %v, want the relist's start %v", cache.Timestamp(), clk.Now())
	}
	clk.Step(time.Second)
	e.relist(ctx, reasonReconcile)
	if n := rt.inspections(); n != 1 {
		t.Errorf("an unchanged pod was inspected again: %d inspections", n)
	}
	if n, all := e.EventInspections(), e.Inspections(); n != 0 || all != 1 {
		t.Errorf("EventInspections() = %d of Inspections() = %d, want 0 of 1: the relist's inspection is not on an event", n, all)
	}
	rt.setPods()
	e.relist(ctx, reasonReconcile)
	want := []Event{{"a", ContainerDied, "c1"}, {"a", ContainerRemoved, "c1"}, {"a", ContainerDied, "s1"}, {"a", ContainerRemoved, "s1"}}
	if got := drain(e.Watch()); !sameEvents(got, want) {
		t.Errorf("events of a vanished pod = %v, want %v", got, want)
	}
	if _, stamp, _ := cache.Entry("a"); !stamp.IsZero() {
		t.Error("a vanished pod kept its cache entry")
	}
}

// sameEvents compares event lists in any order.
func sameEvents(got, want []Event) bool {
	if len(got) != len(want) {
		return false
	}
	count := map[Event]int{}
	for _, e := range got {
		count[e]++
	}
	for _, e := range want {
		count[e]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestEventedFallsBackToRelistingAndReturnsToEvents(t *testing.T) {
	t.Parallel()
	e, src, rt, clk, _ := newTestEvented(t, Config{
		RelistPeriod: time.Second, Evented: EventedConfig{FallbackAfter: 2, ReconnectBackoff: time.Second, MaxReconnectBackoff: time.Second},
	})
	src.setFailNext(2)
	reg := prometheus.NewRegistry()
	e.em = newEventedMetrics(reg)
	lists := func() int {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		return rt.listCalls
	}
	runEvented(t, e)

	// The first failure: the stream waits its backoff next to the reconcile timer.
	waitForWaiters(t, clk, 2)
	if e.Mode() != ModeEvents {
		t.Fatalf("one failure switched the mode to %s", e.Mode())
	}
	clk.Step(time.Second)
	eventually(t, "the fallback after two failures", func() bool { return e.Mode() == ModeRelisting })
	if got := testutil.ToFloat64(e.em.mode.WithLabelValues(string(ModeRelisting))); got != 1 {
		t.Errorf("mode metric relisting = %v, want 1", got)
	}
	eventually(t, "the fallback relist", func() bool { return lists() == 2 })

	// The fallback period passes; the third attempt opens the stream.
	waitForWaiters(t, clk, 2)
	clk.Step(time.Second)
	eventually(t, "a relist every RelistPeriod while relisting", func() bool { return lists() == 3 })
	eventually(t, "the stream to open", src.isOpen)
	waitForWaiters(t, clk, 2)
	if e.Mode() != ModeRelisting {
		t.Fatal("the mode returned to events before the resync relist")
	}
	clk.Step(resyncDelay)
	eventually(t, "the return to events after the resync relist", func() bool { return e.Mode() == ModeEvents })
	if lists() != 4 {
		t.Errorf("list calls = %d, want 4 (initial, two fallback, resync)", lists())
	}

	// A cut stream reopens after its backoff, without a fallback.
	src.cut()
	waitForWaiters(t, clk, 2)
	clk.Step(time.Second)
	eventually(t, "the reconnection", func() bool { return e.Reconnects() == 1 })
	if e.Mode() != ModeEvents {
		t.Errorf("one failure switched the mode to %s", e.Mode())
	}
	if got := testutil.ToFloat64(e.em.connErrors); got != 3 {
		t.Errorf("connection errors metric = %v, want 3", got)
	}
}

// waitForWaiters returns once n timers wait on clk.
func waitForWaiters(t *testing.T, clk *testingclock.FakeClock, n int) {
	t.Helper()
	eventually(t, "timers to be set", func() bool { return clk.Waiters() == n })
}

func TestEventedRelistsForWaitingWorkers(t *testing.T) {
	t.Parallel()
	e, src, rt, clk, cache := newTestEvented(t, Config{Evented: EventedConfig{WaiterRelistDelay: 50 * time.Millisecond}})
	runEvented(t, e)
	eventually(t, "the stream to open", src.isOpen)
	waitForWaiters(t, clk, 2) // the reconcile relist and the resync
	clk.Step(time.Second)
	waitForWaiters(t, clk, 1)
	since := clk.Now()
	got := make(chan *noderuntime.PodStatus, 1)
	go func() {
		s, _ := cache.GetNewerThan(context.Background(), "idle", since)
		got <- s
	}()
	waitForWaiters(t, clk, 2) // the waiters' relist is due
	rt.mu.Lock()
	before := rt.listCalls
	rt.mu.Unlock()
	clk.Step(50 * time.Millisecond)
	select {
	case s := <-got:
		if s.ID != "idle" || len(s.ContainerStatuses) != 0 {
			t.Errorf("status %+v, want the empty status of a pod the runtime does not know", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting worker was not woken")
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.listCalls != before+1 {
		t.Errorf("list calls = %d, want one relist for the waiter after %d", rt.listCalls, before)
	}
}

func TestEventedHealthy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mode    Mode
		elapsed time.Duration
		wantOK  bool
	}{
		{name: "while events drive it, a relist within the reconcile period plus the threshold is healthy", mode: ModeEvents, elapsed: 8 * time.Minute, wantOK: true},
		{name: "while events drive it, an older relist is unhealthy", mode: ModeEvents, elapsed: 9 * time.Minute},
		{name: "while relisting, a relist within the threshold is healthy", mode: ModeRelisting, elapsed: 3 * time.Minute, wantOK: true},
		{name: "while relisting, an older relist is unhealthy", mode: ModeRelisting, elapsed: 4 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := testingclock.NewFakeClock(epoch)
			e := NewEvented(newFakeSource(), newFakeRuntime(), fakeDecoder{}, NewCache(clk), clk, nil, testr.New(t), Config{})
			e.relist(context.Background(), reasonInitial)
			e.setMode(tt.mode)
			clk.Step(tt.elapsed)
			if ok, err := e.Healthy(); ok != tt.wantOK {
				t.Errorf("Healthy() = %v, %v; want %v", ok, err, tt.wantOK)
			}
		})
	}
}
