package pleg

import (
	"reflect"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func cs(id, sandbox string, state noderuntime.ContainerState, created int) *noderuntime.ContainerStatus {
	return &noderuntime.ContainerStatus{ID: noderuntime.ContainerID{Type: "fake", ID: id}, SandboxID: sandbox, State: state,
		CreatedAt: t0.Add(time.Duration(created) * time.Second)}
}

func sbs(id string, ready bool, created int) *runtimeapi.PodSandboxStatus {
	st := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	if ready {
		st = runtimeapi.PodSandboxState_SANDBOX_READY
	}
	return &runtimeapi.PodSandboxStatus{Id: id, State: st, CreatedAt: t0.Add(time.Duration(created) * time.Second).UnixNano()}
}

// summary lists a status's objects newest first as id=state.
func summary(s *noderuntime.PodStatus) []string {
	var out []string
	for _, sb := range s.SandboxStatuses {
		out = append(out, sb.GetId()+"="+sb.GetState().String())
	}
	for _, c := range s.ContainerStatuses {
		out = append(out, c.ID.ID+"="+string(c.State))
	}
	return out
}

func TestMergeSnapshot(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		base, snap *noderuntime.PodStatus
		want       []string
		wantIPs    []string
		wantLive   bool
	}{
		{
			name: "a new pod is the snapshot",
			base: &noderuntime.PodStatus{},
			snap: &noderuntime.PodStatus{SandboxStatuses: []*runtimeapi.PodSandboxStatus{sbs("s1", true, 0)},
				ContainerStatuses: []*noderuntime.ContainerStatus{cs("c1", "s1", run, 1)}, IPs: []string{"10.0.0.1"}},
			want: []string{"s1=SANDBOX_READY", "c1=running"}, wantIPs: []string{"10.0.0.1"},
		},
		{
			name: "an object keeps the later of the cached and the event's state",
			base: &noderuntime.PodStatus{SandboxStatuses: []*runtimeapi.PodSandboxStatus{sbs("s1", true, 0)},
				ContainerStatuses: []*noderuntime.ContainerStatus{cs("c1", "s1", exit, 1), cs("c2", "s1", crtd, 2)}},
			snap: &noderuntime.PodStatus{SandboxStatuses: []*runtimeapi.PodSandboxStatus{sbs("s1", true, 0)},
				ContainerStatuses: []*noderuntime.ContainerStatus{cs("c1", "s1", run, 1), cs("c2", "s1", run, 2)}},
			want: []string{"s1=SANDBOX_READY", "c2=running", "c1=exited"},
		},
		{
			name: "a cached container missing from the event is kept (only deletions remove)",
			base: &noderuntime.PodStatus{SandboxStatuses: []*runtimeapi.PodSandboxStatus{sbs("s1", true, 0)},
				ContainerStatuses: []*noderuntime.ContainerStatus{cs("c1", "s1", run, 1)}},
			snap: &noderuntime.PodStatus{SandboxStatuses: []*runtimeapi.PodSandboxStatus{sbs("s1", true, 0)}},
			want: []string{"s1=SANDBOX_READY", "c1=running"},
		},
		{
			name: "a new sandbox goes first and takes the IPs; the finished one stays",
			base: &noderuntime.PodStatus{SandboxStatuses: []*runtimeapi.PodSandboxStatus{sbs("s1", false, 0)},
				ContainerStatuses: []*noderuntime.ContainerStatus{cs("c1", "s1", exit, 1)}, IPs: []string{"10.0.0.1"}},
			snap: &noderuntime.PodStatus{SandboxStatuses: []*runtimeapi.PodSandboxStatus{sbs("s2", true, 5)}, IPs: []string{"10.0.0.2"}},
			want: []string{"s2=SANDBOX_READY", "s1=SANDBOX_NOTREADY", "c1=exited"}, wantIPs: []string{"10.0.0.2"},
		},
		{
			name: "a stopped sandbox keeps the pod's IPs",
			base: &noderuntime.PodStatus{SandboxStatuses: []*runtimeapi.PodSandboxStatus{sbs("s1", true, 0)}, IPs: []string{"10.0.0.1"}},
			snap: &noderuntime.PodStatus{SandboxStatuses: []*runtimeapi.PodSandboxStatus{sbs("s1", false, 0)}},
			want: []string{"s1=SANDBOX_NOTREADY"}, wantIPs: []string{"10.0.0.1"},
		},
		{
			name: "a live object in another sandbox is reported",
			base: &noderuntime.PodStatus{SandboxStatuses: []*runtimeapi.PodSandboxStatus{sbs("s1", false, 0)},
				ContainerStatuses: []*noderuntime.ContainerStatus{cs("c1", "s1", run, 1)}},
			snap: &noderuntime.PodStatus{SandboxStatuses: []*runtimeapi.PodSandboxStatus{sbs("s2", true, 5)}},
			want: []string{"s2=SANDBOX_READY", "s1=SANDBOX_NOTREADY", "c1=running"}, wantLive: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before := summary(tt.base)
			got, live := mergeSnapshot(tt.base, tt.snap)
			if s := summary(got); !reflect.DeepEqual(s, tt.want) {
				t.Errorf("merged %v, want %v", s, tt.want)
			}
			if !reflect.DeepEqual(got.IPs, tt.wantIPs) {
				t.Errorf("IPs %v, want %v", got.IPs, tt.wantIPs)
			}
			if live != tt.wantLive {
				t.Errorf("othersLive = %v, want %v", live, tt.wantLive)
			}
			if !reflect.DeepEqual(summary(tt.base), before) {
				t.Error("the cached status was modified")
			}
		})
	}
}

func TestChangeTime(t *testing.T) {
	t.Parallel()
	c := &noderuntime.ContainerStatus{ID: noderuntime.ContainerID{ID: "c1"}, CreatedAt: past(1 * time.Second),
		StartedAt: past(2 * time.Second), FinishedAt: past(3 * time.Second)}
	snap := &noderuntime.PodStatus{ContainerStatuses: []*noderuntime.ContainerStatus{c}, SandboxStatuses: []*runtimeapi.PodSandboxStatus{sbs("s1", true, 0)}}
	tests := []struct {
		name string
		typ  runtimeapi.ContainerEventType
		id   string
		want time.Time
	}{
		{"a creation is stamped with CreatedAt", evCreated, "c1", past(time.Second)},
		{"a start is stamped with StartedAt", evStarted, "c1", past(2 * time.Second)},
		{"an exit is stamped with FinishedAt", evStopped, "c1", past(3 * time.Second)},
		{"a sandbox's start is stamped with its creation", evStarted, "s1", t0},
		{"a sandbox's stop has no known time", evStopped, "s1", time.Time{}},
		{"a deletion has no known time", evDeleted, "c1", time.Time{}},
		{"an object not in the snapshot has no known time", evStarted, "zz", time.Time{}},
	}
	for _, tt := range tests {
		ev := &runtimeapi.ContainerEventResponse{ContainerId: tt.id, ContainerEventType: tt.typ}
		if got := changeTime(ev, snap); !got.Equal(tt.want) {
			t.Errorf("%s: changeTime = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestWithoutObject(t *testing.T) {
	t.Parallel()
	base := &noderuntime.PodStatus{SandboxStatuses: []*runtimeapi.PodSandboxStatus{sbs("s2", true, 5), sbs("s1", false, 0)},
		ContainerStatuses: []*noderuntime.ContainerStatus{cs("c2", "s2", run, 6), cs("c1", "s1", exit, 1)}}
	if got := summary(withoutObject(base, "c2")); !reflect.DeepEqual(got, []string{"s2=SANDBOX_READY", "s1=SANDBOX_NOTREADY", "c1=exited"}) {
		t.Errorf("without a container: %v", got)
	}
	if got := summary(withoutObject(base, "s1")); !reflect.DeepEqual(got, []string{"s2=SANDBOX_READY", "c2=running"}) {
		t.Errorf("without a sandbox and its containers: %v", got)
	}
	if len(base.ContainerStatuses) != 2 || len(base.SandboxStatuses) != 2 {
		t.Error("the cached status was modified")
	}
}
