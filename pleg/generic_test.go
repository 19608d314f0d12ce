package pleg

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	testingclock "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

const (
	run  = noderuntime.ContainerStateRunning
	exit = noderuntime.ContainerStateExited
	crtd = noderuntime.ContainerStateCreated
)

func TestRelistEmitsEventsAndInspectsChangedPods(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		before, after []*noderuntime.Pod
		wantEvents    []Event
		wantInspected []types.UID
	}{
		{
			name:          "an unchanged pod gives no event and no inspection",
			before:        []*noderuntime.Pod{pod("a", ctr("c1", run), sandbox("s1", run))},
			after:         []*noderuntime.Pod{pod("a", ctr("c1", run), sandbox("s1", run))},
			wantInspected: nil,
		},
		{
			name:          "a new pod is inspected and its containers and sandbox start",
			after:         []*noderuntime.Pod{pod("a", ctr("c1", run), sandbox("s1", run))},
			wantEvents:    []Event{{"a", ContainerStarted, "c1"}, {"a", ContainerStarted, "s1"}},
			wantInspected: []types.UID{"a"},
		},
		{
			name:          "a new pod without containers is inspected",
			after:         []*noderuntime.Pod{pod("a")},
			wantInspected: []types.UID{"a"},
		},
		{
			name:          "a container that exits gives ContainerDied",
			before:        []*noderuntime.Pod{pod("a", ctr("c1", run)), pod("b", ctr("c2", run))},
			after:         []*noderuntime.Pod{pod("a", ctr("c1", exit)), pod("b", ctr("c2", run))},
			wantEvents:    []Event{{"a", ContainerDied, "c1"}},
			wantInspected: []types.UID{"a"},
		},
		{
			name:          "a created container is inspected but its ContainerChanged is not sent",
			before:        []*noderuntime.Pod{pod("a", sandbox("s1", run))},
			after:         []*noderuntime.Pod{pod("a", ctr("c1", crtd), sandbox("s1", run))},
			wantInspected: []types.UID{"a"},
		},
		{
			name:          "a removed exited container gives ContainerRemoved",
			before:        []*noderuntime.Pod{pod("a", ctr("c1", exit), sandbox("s1", run))},
			after:         []*noderuntime.Pod{pod("a", sandbox("s1", run))},
			wantEvents:    []Event{{"a", ContainerRemoved, "c1"}},
			wantInspected: []types.UID{"a"},
		},
		{
			name:       "a vanished pod gives ContainerDied and ContainerRemoved without inspection",
			before:     []*noderuntime.Pod{pod("a", ctr("c1", run), sandbox("s1", exit))},
			after:      nil,
			wantEvents: []Event{{"a", ContainerDied, "c1"}, {"a", ContainerRemoved, "c1"}, {"a", ContainerRemoved, "s1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, rt, clk, _ := newTestGeneric(t, Config{})
			ctx := context.Background()
			rt.setPods(tt.before...)
			g.Relist(ctx)
			drain(g.Watch())
			clear(rt.statusCalls)
			clk.Step(time.Second)

			rt.setPods(tt.after...)
			g.Relist(ctx)
			if got := drain(g.Watch()); !reflect.DeepEqual(got, tt.wantEvents) {
				t.Errorf("events = %v, want %v", got, tt.wantEvents)
			}
			var inspected []types.UID
			for uid := range rt.statusCalls {
				inspected = append(inspected, uid)
			}
			sort.Slice(inspected, func(i, j int) bool { return inspected[i] < inspected[j] })
			if !reflect.DeepEqual(inspected, tt.wantInspected) {
				t.Errorf("inspected %v, want %v", inspected, tt.wantInspected)
			}
		})
	}
}

func TestRelistInspectsOnlyChangedPods(t *testing.T) {
	t.Parallel()
	g, rt, clk, _ := newTestGeneric(t, Config{})
	ctx := context.Background()
	var pods []*noderuntime.Pod
	for i := range 100 {
		pods = append(pods, pod(types.UID(fmt.Sprint(i)), ctr(fmt.Sprint("c", i), run), sandbox(fmt.Sprint("s", i), run)))
	}
	rt.setPods(pods...)
	g.Relist(ctx)
	if n := rt.inspections(); n != 100 {
		t.Fatalf("first relist inspected %d pods, want 100", n)
	}
	clk.Step(time.Second)
	g.Relist(ctx)
	if n := rt.inspections(); n != 100 {
		t.Errorf("second relist of 100 unchanged pods inspected %d, want 0", n-100)
	}
	changed := append([]*noderuntime.Pod(nil), pods...)
	changed[42] = pod("42", ctr("c42", exit), sandbox("s42", run))
	rt.setPods(changed...)
	clk.Step(time.Second)
	g.Relist(ctx)
	if n := rt.inspections() - 100; n != 1 || rt.statusCalls["42"] != 2 {
		t.Errorf("relist with one changed pod inspected %d pods (pod 42: %d times), want only pod 42 again", n, rt.statusCalls["42"])
	}
}

func TestRelistRetriesFailedInspection(t *testing.T) {
	t.Parallel()
	g, rt, clk, cache := newTestGeneric(t, Config{})
	ctx := context.Background()
	errBoom := errors.New("boom")
	rt.setPods(pod("a", ctr("c1", run)))
	rt.statusErr["a"] = errBoom

	g.Relist(ctx)
	if _, err := cache.Get("a"); !errors.Is(err, errBoom) {
		t.Errorf("cache error after a failed inspection = %v, want it to wrap %v", err, errBoom)
	}
	if got := drain(g.Watch()); len(got) != 0 {
		t.Errorf("events after a failed inspection = %v, want none", got)
	}

	delete(rt.statusErr, "a")
	rt.statuses["a"] = status("a", "10.0.0.1")
	clk.Step(time.Second)
	g.Relist(ctx)
	if rt.statusCalls["a"] != 2 {
		t.Errorf("pod inspected %d times, want a retry on the unchanged relist", rt.statusCalls["a"])
	}
	if s, err := cache.Get("a"); err != nil || s.IPs[0] != "10.0.0.1" {
		t.Errorf("cache after retry = %+v, %v; want the new status", s, err)
	}
	if got, want := drain(g.Watch()), []Event{{"a", ContainerStarted, "c1"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("events after retry = %v, want %v (held back from the failed relist)", got, want)
	}

	clk.Step(time.Second)
	g.Relist(ctx)
	if rt.statusCalls["a"] != 2 {
		t.Errorf("pod inspected %d times, want no third inspection once it succeeded", rt.statusCalls["a"])
	}
}

func TestRelistWakesWaitersOnUnchangedPods(t *testing.T) {
	t.Parallel()
	g, rt, clk, cache := newTestGeneric(t, Config{})
	ctx := context.Background()
	rt.setPods(pod("a", ctr("c1", run)))
	g.Relist(ctx)
	synced := clk.Now().Add(time.Millisecond) // a worker synced after that relist
	ch := waitAsync(t, ctx, cache, "a", synced)

	clk.Step(time.Second)
	g.Relist(ctx)
	r := expectResult(t, ch)
	if r.err != nil || r.status.ID != "a" {
		t.Errorf("GetNewerThan = %+v, %v; want pod a's status", r.status, r.err)
	}
	if rt.statusCalls["a"] != 1 {
		t.Errorf("pod inspected %d times, want once: the relist woke the worker without inspecting", rt.statusCalls["a"])
	}
}

func TestRelistDeletesVanishedPod(t *testing.T) {
	t.Parallel()
	g, rt, clk, cache := newTestGeneric(t, Config{})
	ctx := context.Background()
	rt.setPods(pod("a", ctr("c1", run)))
	rt.statuses["a"] = status("a", "10.0.0.1")
	g.Relist(ctx)
	ch := waitAsync(t, ctx, cache, "a", clk.Now())

	rt.setPods()
	clk.Step(time.Second)
	g.Relist(ctx)
	if r := expectResult(t, ch); r.err != nil || r.status.ID != "a" || len(r.status.IPs) != 0 {
		t.Errorf("GetNewerThan after the pod vanished = %+v, %v; want an empty status", r.status, r.err)
	}
}

func TestRelistListFailure(t *testing.T) {
	t.Parallel()
	g, rt, clk, cache := newTestGeneric(t, Config{})
	ctx := context.Background()
	rt.setPods(pod("a", ctr("c1", run)))
	g.Relist(ctx)
	drain(g.Watch())
	last := clk.Now()

	rt.listErr = errors.New("runtime down")
	clk.Step(time.Minute)
	g.Relist(ctx)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := cache.GetNewerThan(cctx, "a", last); err == nil {
		t.Error("the cache's global timestamp moved on a failed relist")
	}
	clk.Step(2*time.Minute + time.Second)
	ok, err := g.Healthy()
	if want := "pleg was last seen active 3m1s ago; threshold is 3m0s"; ok || err == nil || err.Error() != want {
		t.Errorf("Healthy() = %v, %v; want false, %q", ok, err, want)
	}
}

func TestRelistKeepsPodIPsOfStoppedPod(t *testing.T) {
	t.Parallel()
	g, rt, clk, cache := newTestGeneric(t, Config{})
	ctx := context.Background()
	rt.setPods(pod("a", ctr("c1", run)))
	rt.statuses["a"] = status("a", "10.0.0.1")
	g.Relist(ctx)

	rt.setPods(pod("a", ctr("c1", exit)))
	rt.statuses["a"] = &noderuntime.PodStatus{ID: "a", SandboxStatuses: []*runtimeapi.PodSandboxStatus{{State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY}}}
	clk.Step(time.Second)
	g.Relist(ctx)
	if s, _ := cache.Get("a"); len(s.IPs) != 1 || s.IPs[0] != "10.0.0.1" {
		t.Errorf("IPs of the stopped pod = %v, want the last known 10.0.0.1", s.IPs)
	}

	rt.setPods(pod("a", ctr("c1", exit), ctr("c2", run)))
	rt.statuses["a"] = &noderuntime.PodStatus{ID: "a", SandboxStatuses: []*runtimeapi.PodSandboxStatus{{State: runtimeapi.PodSandboxState_SANDBOX_READY}}}
	clk.Step(time.Second)
	g.Relist(ctx)
	if s, _ := cache.Get("a"); len(s.IPs) != 0 {
		t.Errorf("IPs with a ready sandbox reporting none = %v, want none", s.IPs)
	}
}

func TestRelistSendsEventsAfterInspection(t *testing.T) {
	t.Parallel()
	g, rt, _, _ := newTestGeneric(t, Config{})
	ctx := context.Background()
	rt.setPods(pod("a", ctr("c1", run)), pod("b", ctr("c2", run)))
	var queued []int
	rt.onStatus = func(types.UID) { queued = append(queued, len(g.Watch())) }
	g.Relist(ctx)
	if want := []int{0, 1}; !reflect.DeepEqual(queued, want) {
		t.Errorf("events queued when each pod was inspected = %v, want %v (a pod's events after its inspection)", queued, want)
	}
}

func TestRelistDropsEventsWhenChannelIsFull(t *testing.T) {
	t.Parallel()
	g, rt, _, _ := newTestGeneric(t, Config{ChannelCapacity: 1})
	rt.setPods(pod("a", ctr("c1", run), ctr("c2", run), ctr("c3", run)))
	g.Relist(context.Background())
	if got := drain(g.Watch()); len(got) != 1 || got[0].Data != "c1" {
		t.Errorf("events = %v, want only the first one", got)
	}
	if n := g.DroppedEvents(); n != 2 {
		t.Errorf("DroppedEvents() = %d, want 2", n)
	}
}

func TestRelistRecordsKubeletMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	clk := testingclock.NewFakeClock(epoch)
	rt := newFakeRuntime()
	rt.setPods(pod("a", ctr("c1", run)))
	g := NewGeneric(rt, NewCache(clk), clk, reg, logr.Discard(), Config{})
	g.Relist(t.Context())
	clk.Step(time.Second)
	g.Relist(t.Context())
	want := map[string]int{"kubelet_pleg_relist_duration_seconds": 2, "kubelet_pleg_relist_interval_seconds": 1}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range families {
		seen[f.GetName()] = true
		if n, ok := want[f.GetName()]; ok {
			if got := int(f.GetMetric()[0].GetHistogram().GetSampleCount()); got != n {
				t.Errorf("%s has %d samples, want %d", f.GetName(), got, n)
			}
		}
	}
	for _, name := range []string{"kubelet_pleg_relist_duration_seconds", "kubelet_pleg_relist_interval_seconds", "kubelet_pleg_last_seen_seconds", "kubelet_running_pods"} {
		if !seen[name] {
			t.Errorf("metric %s not exposed", name)
		}
	}
}
