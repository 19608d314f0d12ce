package cri

import (
	"reflect"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// fakeProbes is a probeResults by container name.
type fakeProbes struct {
	failedLiveness map[string]bool
	startup        map[string]noderuntime.StartupResult
}

func (f fakeProbes) startupResult(c *corev1.Container, _ *noderuntime.ContainerStatus) noderuntime.StartupResult {
	if r, ok := f.startup[c.Name]; ok {
		return r
	}
	return noderuntime.StartupSucceeded
}

func (f fakeProbes) livenessFailed(c *corev1.Container, _ *noderuntime.ContainerStatus) bool {
	return f.failedLiveness[c.Name]
}

func TestComputePodActionsKillsContainersWhoseProbesFailed(t *testing.T) {
	ready := []*runtimeapi.PodSandboxStatus{sb("s1", 0, true)}
	status := func(pod *corev1.Pod, names ...string) *noderuntime.PodStatus {
		s := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: ready}
		for _, n := range names {
			st := cs(pod, n, noderuntime.ContainerStateRunning, 0)
			for i := range pod.Spec.InitContainers {
				if pod.Spec.InitContainers[i].Name == n {
					st.Hash = hashContainer(&pod.Spec.InitContainers[i])
				}
			}
			s.ContainerStatuses = append(s.ContainerStatuses, st)
		}
		return s
	}
	withSidecar := func(pod *corev1.Pod) *corev1.Pod {
		always := corev1.ContainerRestartPolicyAlways
		pod.Spec.InitContainers = []corev1.Container{{Name: "side", Image: testImage, RestartPolicy: &always}}
		return pod
	}
	cases := []struct {
		name       string
		policy     corev1.RestartPolicy
		sidecar    bool
		probes     fakeProbes
		wantKill   map[string]string // container ID -> message
		wantStart  []int
		wantInit   []int
		wantKilled bool
	}{
		{name: "a container whose liveness probe failed is killed and restarted",
			probes:    fakeProbes{failedLiveness: map[string]bool{"a": true}},
			wantKill:  map[string]string{"a-id": "Container a failed liveness probe, will be restarted"},
			wantStart: []int{0}},
		{name: "a container whose startup probe failed is killed and restarted",
			probes:    fakeProbes{startup: map[string]noderuntime.StartupResult{"b": noderuntime.StartupFailed}},
			wantKill:  map[string]string{"b-id": "Container b failed startup probe, will be restarted"},
			wantStart: []int{1}},
		{name: "a startup probe that has not decided yet kills nothing",
			probes:    fakeProbes{startup: map[string]noderuntime.StartupResult{"a": noderuntime.StartupUnknown}},
			wantKill:  map[string]string{},
			wantStart: []int{}},
		{name: "under restartPolicy Never a failed liveness probe kills without a restart",
			policy:    corev1.RestartPolicyNever,
			probes:    fakeProbes{failedLiveness: map[string]bool{"a": true}},
			wantKill:  map[string]string{"a-id": "Container a failed liveness probe"},
			wantStart: []int{}},
		{name: "under restartPolicy Never the pod is killed once no container keeps running",
			policy:     corev1.RestartPolicyNever,
			probes:     fakeProbes{failedLiveness: map[string]bool{"a": true, "b": true}},
			wantKill:   map[string]string{"a-id": "Container a failed liveness probe", "b-id": "Container b failed liveness probe"},
			wantStart:  []int{},
			wantKilled: true},
		{name: "a sidecar whose liveness probe failed is killed and restarted",
			sidecar:   true,
			probes:    fakeProbes{failedLiveness: map[string]bool{"side": true}},
			wantKill:  map[string]string{"side-id": "Init container side failed liveness probe, will be restarted"},
			wantStart: []int{}, wantInit: []int{0}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pod := newPod("u1", "a", "b")
			if tt.policy != "" {
				pod.Spec.RestartPolicy = tt.policy
			}
			names := []string{"a", "b"}
			if tt.sidecar {
				pod = withSidecar(pod)
				names = append(names, "side")
			}
			got := computePodActions(pod, status(pod, names...), tt.probes)
			gotKill := map[string]string{}
			for id, k := range got.ContainersToKill {
				gotKill[id.ID] = k.Message
			}
			sort.Ints(got.ContainersToStart)
			if !reflect.DeepEqual(gotKill, tt.wantKill) || !reflect.DeepEqual(got.ContainersToStart, tt.wantStart) ||
				!reflect.DeepEqual(got.InitContainersToStart, tt.wantInit) || got.KillPod != tt.wantKilled {
				t.Errorf("got %s\nkill %v", got, gotKill)
			}
		})
	}
}

func TestProbeGracePeriodIsTheProbesOwnUnlessThePodIsBeingDeleted(t *testing.T) {
	pod := newPod("u1", "a")
	pod.Spec.Containers[0].LivenessProbe = &corev1.Probe{TerminationGracePeriodSeconds: ptr(int64(5))}
	cases := []struct {
		name   string
		reason string
		delete bool
		want   *int64
	}{
		{name: "a liveness kill uses the liveness probe's grace period", reason: killReasonLivenessProbe, want: ptr(int64(5))},
		{name: "a startup kill without a startup probe grace period uses the pod's", reason: killReasonStartupProbe},
		{name: "a spec change uses the pod's", reason: killReasonSpecChanged},
		{name: "a pod being deleted keeps its deletion grace period", reason: killReasonLivenessProbe, delete: true},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			p := pod.DeepCopy()
			if tt.delete {
				p.DeletionGracePeriodSeconds = ptr(int64(1))
			}
			got := probeGracePeriod(p, containerToKill{Name: "a", Reason: tt.reason})
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("grace = %v, want %v", got, tt.want)
			}
		})
	}
}
