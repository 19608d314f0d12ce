package cri

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestGetPodStatusRebuildsStateAfterAgentRestart(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "a", "b")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	e.crash(t, pod)
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	// A new manager over the same runtime knows nothing but what the runtime
	// tells it.
	fresh := NewManager(e.rs, e.is, e.clk, logr.Discard(), e.cfg)
	st, err := fresh.GetPodStatus(context.Background(), pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	a, b := st.FindContainerStatusByName("a"), st.FindContainerStatusByName("b")
	if a.RestartCount != 1 || b.RestartCount != 0 {
		t.Errorf("restart counts a=%d b=%d, want 1 and 0", a.RestartCount, b.RestartCount)
	}
	if a.Hash != hashContainer(&pod.Spec.Containers[0]) || a.Image != testImage || a.SandboxID == "" {
		t.Errorf("container a status %+v", a)
	}
	if len(st.ContainerStatuses) != 3 || st.ContainerStatuses[0].CreatedAt.Before(st.ContainerStatuses[2].CreatedAt) {
		t.Errorf("want 3 container statuses newest first, got %d", len(st.ContainerStatuses))
	}
	if len(st.IPs) != 1 || st.IPs[0] != "192.168.192.168" || !st.TimeStamp.Equal(e.clk.Now()) {
		t.Errorf("IPs %v timestamp %v", st.IPs, st.TimeStamp)
	}
	if r := fresh.SyncPod(context.Background(), pod, st); len(r.Steps) != 0 {
		t.Errorf("a restarted agent would act on a healthy pod: %+v", r.Steps)
	}
}

func TestGetPodStatusOfUnknownPodIsEmpty(t *testing.T) {
	e := newTestEnv(t)
	st, err := e.m.GetPodStatus(context.Background(), "nope", "x", "y")
	if err != nil {
		t.Fatal(err)
	}
	if st.ID != "nope" || st.Name != "x" || st.Namespace != "y" || len(st.ContainerStatuses) != 0 || len(st.SandboxStatuses) != 0 || !st.TimeStamp.Equal(e.clk.Now()) {
		t.Errorf("status = %+v", st)
	}
}

func TestOtherInstancesAreInvisible(t *testing.T) {
	e := newTestEnv(t)
	other := NewManager(e.rs, e.is, e.clk, logr.Discard(), Config{InstanceID: "node-b", RootDir: e.cfg.RootDir, ResolvConf: e.cfg.ResolvConf,
		PodLogsDir: e.cfg.PodLogsDir, ContainerLogsDir: e.cfg.ContainerLogsDir})
	theirs := newPod("u9", "a")
	if err := other.SyncPod(context.Background(), theirs, nil).Error(); err != nil {
		t.Fatal(err)
	}
	ours := newPod("u1", "a")
	if err := e.sync(t, ours).Error(); err != nil {
		t.Fatal(err)
	}
	pods, err := e.m.GetPods(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 1 || pods[0].ID != "u1" || len(pods[0].Containers) != 1 || len(pods[0].Sandboxes) != 1 {
		t.Fatalf("GetPods = %+v, want only pod u1", pods)
	}
	if st := e.status(t, theirs); len(st.ContainerStatuses)+len(st.SandboxStatuses) != 0 {
		t.Errorf("GetPodStatus sees another instance's pod: %+v", st)
	}
	if err := e.m.GarbageCollect(context.Background(), func(types.UID) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if st, _ := other.GetPodStatus(context.Background(), theirs.UID, theirs.Name, theirs.Namespace); len(st.ContainerStatuses) != 1 {
		t.Errorf("our GC touched another instance's pod")
	}
}

func TestGetPodsListsOnlyRunningUnlessAll(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "a", "b")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	e.rs.setContainer(t, e.containerIDOf(t, pod, "a"), runtimeapi.ContainerState_CONTAINER_EXITED, 0, e.clk.Now())
	for _, tt := range []struct {
		all  bool
		want int
	}{{false, 1}, {true, 2}} {
		pods, err := e.m.GetPods(context.Background(), tt.all)
		if err != nil {
			t.Fatal(err)
		}
		if len(pods) != 1 || len(pods[0].Containers) != tt.want || pods[0].Name != "web-u1" || pods[0].Namespace != "default" {
			t.Errorf("GetPods(all=%v) = %+v, want %d containers", tt.all, pods, tt.want)
		}
		if pods[0].Containers[0].ID.Type != defaultType || pods[0].Containers[0].Hash == 0 {
			t.Errorf("container %+v", pods[0].Containers[0])
		}
	}
}

func TestGetPodStatusSkipsObjectsRemovedMeanwhile(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "a")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	e.rs.InjectError("ContainerStatus", grpcstatus.Error(codes.NotFound, "gone"))
	st := e.status(t, pod)
	if len(st.ContainerStatuses) != 0 || len(st.SandboxStatuses) != 1 {
		t.Errorf("status = %+v", st)
	}
	e.rs.InjectError("ContainerStatus", errors.New("broken"))
	if _, err := e.m.GetPodStatus(context.Background(), pod.UID, pod.Name, pod.Namespace); err == nil {
		t.Error("a real ContainerStatus error was swallowed")
	}
}

func TestStatusJudgesOnlyRuntimeAndNetworkReady(t *testing.T) {
	cond := func(typ string, ok bool) *runtimeapi.RuntimeCondition {
		return &runtimeapi.RuntimeCondition{Type: typ, Status: ok, Reason: "R", Message: "M"}
	}
	cases := []struct {
		name             string
		conds            []*runtimeapi.RuntimeCondition
		ready, netReady  bool
		wantMessageEmpty bool
		wantNetMessage   string
	}{
		{"both ready and a deprecation warning is healthy",
			[]*runtimeapi.RuntimeCondition{cond("RuntimeReady", true), cond("NetworkReady", true), cond("ContainerdHasNoDeprecationWarnings", false)}, true, true, true, ""},
		{"network not ready is reported",
			[]*runtimeapi.RuntimeCondition{cond("RuntimeReady", true), cond("NetworkReady", false)}, true, false, false, "NetworkReady=false reason:R message:M"},
		{"no conditions at all is not ready", nil, false, false, false, "NetworkReady condition missing"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			e.rs.FakeStatus = &runtimeapi.RuntimeStatus{Conditions: tt.conds}
			st, err := e.m.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.Ready != tt.ready || st.NetworkReady != tt.netReady || (st.Message == "") != tt.wantMessageEmpty || st.NetworkMessage != tt.wantNetMessage {
				t.Errorf("status = %+v", st)
			}
		})
	}
}

func TestTypeIsLearnedFromVersion(t *testing.T) {
	e := newTestEnv(t)
	if e.m.Type() != "cri" {
		t.Fatalf("Type before Version = %q", e.m.Type())
	}
	e.rs.InjectError("Version", errors.New("down"))
	if _, err := e.m.Version(context.Background()); err == nil || e.m.Type() != "cri" {
		t.Fatalf("failed Version: err %v type %q", err, e.m.Type())
	}
	v, err := e.m.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v.RuntimeName != "fakeRuntime" || e.m.Type() != "fakeRuntime" || v.String() != "fakeRuntime://0.1.0" {
		t.Errorf("version %+v type %q", v, e.m.Type())
	}
	pod := newPod("u1", "a")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	if id := e.status(t, pod).ContainerStatuses[0].ID; id.Type != "fakeRuntime" {
		t.Errorf("container ID %v not qualified with the runtime type", id)
	}
}

// Two copies of a container created in the same instant are ordered by
// restart count, newest first, so the next sync sees the latest attempt.
func TestNewerStatusFirstBreaksCreationTiesByRestartCount(t *testing.T) {
	at := time.Unix(100, 0)
	statuses := []*noderuntime.ContainerStatus{
		{Name: "old", CreatedAt: at.Add(-time.Second), RestartCount: 5},
		{Name: "first", CreatedAt: at, RestartCount: 0},
		{Name: "second", CreatedAt: at, RestartCount: 1},
	}
	slices.SortStableFunc(statuses, newerStatusFirst)
	var got []string
	for _, s := range statuses {
		got = append(got, s.Name)
	}
	if want := []string{"second", "first", "old"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
