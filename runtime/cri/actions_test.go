package cri

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// sb builds a sandbox status: id, attempt, ready, pod network with an IP.
func sb(id string, attempt uint32, ready bool) *runtimeapi.PodSandboxStatus {
	state := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	if ready {
		state = runtimeapi.PodSandboxState_SANDBOX_READY
	}
	return &runtimeapi.PodSandboxStatus{
		Id: id, State: state, Metadata: &runtimeapi.PodSandboxMetadata{Attempt: attempt},
		Network: &runtimeapi.PodSandboxNetworkStatus{Ip: "10.1.0.7"},
		Linux: &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{
			Options: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD},
		}},
	}
}

// cs builds a container status for container c of pod with its current hash.
func cs(pod *corev1.Pod, name string, state noderuntime.ContainerState, exitCode int) *noderuntime.ContainerStatus {
	var hash uint64
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			hash = hashContainer(&pod.Spec.Containers[i])
		}
	}
	return &noderuntime.ContainerStatus{
		ID: noderuntime.ContainerID{Type: "fake", ID: name + "-id"}, Name: name,
		State: state, ExitCode: exitCode, Hash: hash,
	}
}

// want is the comparable shape of podActions.
type want struct {
	kill, create bool
	sandboxID    string
	attempt      uint32
	start        []int
	killed       map[string]string // container ID -> reason
}

func TestComputePodActions(t *testing.T) {
	const (
		running = noderuntime.ContainerStateRunning
		exited  = noderuntime.ContainerStateExited
		created = noderuntime.ContainerStateCreated
		unknown = noderuntime.ContainerStateUnknown
	)
	type tc struct {
		name   string
		pod    func() *corev1.Pod
		status func(*corev1.Pod) *noderuntime.PodStatus
		want   want
	}
	two := func() *corev1.Pod { return newPod("u1", "a", "b") }
	one := func() *corev1.Pod { return newPod("u1", "a") }
	policy := func(p corev1.RestartPolicy, f func() *corev1.Pod) func() *corev1.Pod {
		return func() *corev1.Pod { pod := f(); pod.Spec.RestartPolicy = p; return pod }
	}
	st := func(sbs []*runtimeapi.PodSandboxStatus, css ...func(*corev1.Pod) *noderuntime.ContainerStatus) func(*corev1.Pod) *noderuntime.PodStatus {
		return func(pod *corev1.Pod) *noderuntime.PodStatus {
			s := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: sbs}
			for _, f := range css {
				s.ContainerStatuses = append(s.ContainerStatuses, f(pod))
			}
			return s
		}
	}
	c := func(name string, state noderuntime.ContainerState, exit int) func(*corev1.Pod) *noderuntime.ContainerStatus {
		return func(pod *corev1.Pod) *noderuntime.ContainerStatus { return cs(pod, name, state, exit) }
	}
	ready := []*runtimeapi.PodSandboxStatus{sb("s1", 0, true)}
	dead := []*runtimeapi.PodSandboxStatus{sb("s1", 0, false)}
	cases := []tc{
		{name: "a new pod gets a sandbox and all its containers",
			pod: two, status: st(nil),
			want: want{kill: true, create: true, start: []int{0, 1}}},
		{name: "a pod with a nil status is treated as new",
			pod: two, status: func(*corev1.Pod) *noderuntime.PodStatus { return nil },
			want: want{kill: true, create: true, start: []int{0, 1}}},
		{name: "a pod whose only sandbox is not ready gets a new sandbox with the next attempt",
			pod: two, status: st(dead, c("a", exited, 137), c("b", exited, 137)),
			want: want{kill: true, create: true, sandboxID: "s1", attempt: 1, start: []int{0, 1}}},
		{name: "a pod with two ready sandboxes is killed and recreated",
			pod: two, status: st([]*runtimeapi.PodSandboxStatus{sb("s2", 1, true), sb("s1", 0, true)}, c("a", running, 0), c("b", running, 0)),
			want: want{kill: true, create: true, sandboxID: "s2", attempt: 2, start: []int{0, 1}}},
		{name: "the newest sandbox decides even when an older one is ready",
			pod: one, status: st([]*runtimeapi.PodSandboxStatus{sb("s2", 3, false), sb("s1", 2, true)}, c("a", exited, 1)),
			want: want{kill: true, create: true, sandboxID: "s2", attempt: 4, start: []int{0}}},
		{name: "a running pod with unchanged containers needs nothing",
			pod: two, status: st(ready, c("a", running, 0), c("b", running, 0)),
			want: want{sandboxID: "s1", start: []int{}}},
		{name: "an exited container under Always is restarted",
			pod: two, status: st(ready, c("a", exited, 0), c("b", running, 0)),
			want: want{sandboxID: "s1", start: []int{0}}},
		{name: "a container that failed under OnFailure is restarted",
			pod: policy(corev1.RestartPolicyOnFailure, two), status: st(ready, c("a", exited, 1), c("b", running, 0)),
			want: want{sandboxID: "s1", start: []int{0}}},
		{name: "a container that succeeded under OnFailure is not restarted",
			pod: policy(corev1.RestartPolicyOnFailure, two), status: st(ready, c("a", exited, 0), c("b", running, 0)),
			want: want{sandboxID: "s1", start: []int{}}},
		{name: "a pod whose only container succeeded under OnFailure is killed",
			pod: policy(corev1.RestartPolicyOnFailure, one), status: st(ready, c("a", exited, 0)),
			want: want{kill: true, sandboxID: "s1", start: []int{}}},
		{name: "an exited container under Never is not restarted",
			pod: policy(corev1.RestartPolicyNever, two), status: st(ready, c("a", exited, 2), c("b", running, 0)),
			want: want{sandboxID: "s1", start: []int{}}},
		{name: "under Never a container that never ran is started",
			pod: policy(corev1.RestartPolicyNever, two), status: st(ready, c("a", exited, 0)),
			want: want{sandboxID: "s1", start: []int{1}}},
		{name: "under Never with every container done the pod is killed and gets no new sandbox",
			pod: policy(corev1.RestartPolicyNever, two), status: st(dead, c("a", exited, 0), c("b", exited, 1)),
			want: want{kill: true, sandboxID: "s1", attempt: 1, start: []int{}}},
		{name: "under Never a sandbox that never got a container is created again",
			pod: policy(corev1.RestartPolicyNever, one), status: st(dead),
			want: want{kill: true, create: true, sandboxID: "s1", attempt: 1, start: []int{0}}},
		{name: "a recreated sandbox under OnFailure restarts failed containers but not succeeded ones",
			pod: policy(corev1.RestartPolicyOnFailure, two), status: st(dead, c("a", exited, 0), c("b", exited, 3)),
			want: want{kill: true, create: true, sandboxID: "s1", attempt: 1, start: []int{1}}},
		{name: "a recreated sandbox under OnFailure with every container succeeded is not created",
			pod: policy(corev1.RestartPolicyOnFailure, two), status: st(dead, c("a", exited, 0), c("b", exited, 0)),
			want: want{kill: true, sandboxID: "s1", attempt: 1, start: []int{}}},
		{name: "a recreated sandbox under Always restarts succeeded containers too",
			pod: two, status: st(dead, c("a", exited, 0), c("b", exited, 0)),
			want: want{kill: true, create: true, sandboxID: "s1", attempt: 1, start: []int{0, 1}}},
		{name: "a running container whose spec hash changed is killed and restarted",
			pod: two, status: func(pod *corev1.Pod) *noderuntime.PodStatus {
				s := st(ready, c("a", running, 0), c("b", running, 0))(pod)
				s.ContainerStatuses[1].Hash++
				return s
			},
			want: want{sandboxID: "s1", start: []int{1}, killed: map[string]string{"b-id": killReasonSpecChanged}}},
		{name: "a spec change restarts the container even under Never",
			pod: policy(corev1.RestartPolicyNever, one), status: func(pod *corev1.Pod) *noderuntime.PodStatus {
				s := st(ready, c("a", running, 0))(pod)
				s.ContainerStatuses[0].Hash = 42
				return s
			},
			want: want{sandboxID: "s1", start: []int{0}, killed: map[string]string{"a-id": killReasonSpecChanged}}},
		{name: "a resource change alone does not count as a spec change",
			pod: func() *corev1.Pod {
				pod := one()
				pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
				return pod
			},
			status: func(pod *corev1.Pod) *noderuntime.PodStatus {
				s := st(ready, c("a", running, 0))(pod)
				s.ContainerStatuses[0].Hash = hashContainer(&newPod("u1", "a").Spec.Containers[0])
				return s
			},
			want: want{sandboxID: "s1", start: []int{}}},
		{name: "a created but not running container is started again",
			pod: two, status: st(ready, c("a", created, 0), c("b", running, 0)),
			want: want{sandboxID: "s1", start: []int{0}}},
		{name: "a container in unknown state is killed before it is started again",
			pod: two, status: st(ready, c("a", unknown, 0), c("b", running, 0)),
			want: want{sandboxID: "s1", start: []int{0}, killed: map[string]string{"a-id": killReasonUnknown}}},
		{name: "switching to the host network recreates the sandbox without naming the old one",
			pod:    func() *corev1.Pod { pod := two(); pod.Spec.HostNetwork = true; return pod },
			status: st(ready, c("a", running, 0), c("b", running, 0)),
			want:   want{kill: true, create: true, attempt: 1, start: []int{0, 1}}},
		{name: "a pod-network sandbox without an IP is recreated",
			pod: one, status: func(pod *corev1.Pod) *noderuntime.PodStatus {
				s := st([]*runtimeapi.PodSandboxStatus{sb("s1", 0, true)}, c("a", running, 0))(pod)
				s.SandboxStatuses[0].Network.Ip = ""
				return s
			},
			want: want{kill: true, create: true, sandboxID: "s1", attempt: 1, start: []int{0}}},
		{name: "a host-network sandbox without an IP is kept",
			pod: func() *corev1.Pod { pod := one(); pod.Spec.HostNetwork = true; return pod },
			status: func(pod *corev1.Pod) *noderuntime.PodStatus {
				s := st([]*runtimeapi.PodSandboxStatus{sb("s1", 0, true)}, c("a", running, 0))(pod)
				s.SandboxStatuses[0].Network.Ip = ""
				s.SandboxStatuses[0].Linux.Namespaces.Options.Network = runtimeapi.NamespaceMode_NODE
				return s
			},
			want: want{sandboxID: "s1", start: []int{}}},
		{name: "a pod being deleted restarts no exited container and is killed",
			pod: func() *corev1.Pod {
				pod := one()
				pod.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
				return pod
			},
			status: st(ready, c("a", exited, 1)),
			want:   want{kill: true, sandboxID: "s1", start: []int{}}},
		{name: "a missing container of a running pod is started",
			pod: two, status: st(ready, c("a", running, 0)),
			want: want{sandboxID: "s1", start: []int{1}}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pod := tt.pod()
			got := computePodActions(pod, tt.status(pod), nil)
			gotKilled := map[string]string{}
			for id, k := range got.ContainersToKill {
				gotKilled[id.ID] = k.Reason
			}
			wantKilled := tt.want.killed
			if wantKilled == nil {
				wantKilled = map[string]string{}
			}
			if got.KillPod != tt.want.kill || got.CreateSandbox != tt.want.create || got.SandboxID != tt.want.sandboxID ||
				got.Attempt != tt.want.attempt || !reflect.DeepEqual(got.ContainersToStart, tt.want.start) || !reflect.DeepEqual(gotKilled, wantKilled) {
				t.Errorf("got %s\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestHashContainerIsStableAndSensitive(t *testing.T) {
	base := newPod("u1", "a").Spec.Containers[0]
	if hashContainer(&base) != hashContainer(base.DeepCopy()) {
		t.Fatal("hash of equal containers differs")
	}
	changed := base.DeepCopy()
	changed.Image = "localhost/nodekit/busybox:2"
	if hashContainer(&base) == hashContainer(changed) {
		t.Error("image change did not change the hash")
	}
	changed = base.DeepCopy()
	changed.Env = []corev1.EnvVar{{Name: "X", Value: "1"}}
	if hashContainer(&base) == hashContainer(changed) {
		t.Error("env change did not change the hash")
	}
}
