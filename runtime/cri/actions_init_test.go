package cri

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// initPod returns a pod with the named init containers (a name ending in
// "-sc" is a sidecar), regular containers and ephemeral containers.
func initPod(policy corev1.RestartPolicy, inits, regular, ephemeral []string) *corev1.Pod {
	pod := newPod("u1", regular...)
	pod.Spec.RestartPolicy = policy
	always := corev1.ContainerRestartPolicyAlways
	for _, n := range inits {
		c := corev1.Container{Name: n, Image: testImage, Command: []string{"sh", "-c", "true"}}
		if len(n) > 3 && n[len(n)-3:] == "-sc" {
			c.RestartPolicy = &always
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	}
	for _, n := range ephemeral {
		pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: n, Image: testImage}})
	}
	return pod
}

// anyCS builds the status of any container of the pod with its current hash.
func anyCS(pod *corev1.Pod, name string, state noderuntime.ContainerState, exitCode int) *noderuntime.ContainerStatus {
	var hash uint64
	if c := containerSpec(pod, name); c != nil {
		hash = hashContainer(c)
	}
	return &noderuntime.ContainerStatus{ID: noderuntime.ContainerID{Type: "fake", ID: name + "-id"}, Name: name,
		State: state, ExitCode: exitCode, Hash: hash}
}

// actionsWant is the comparable shape of podActions with init and ephemeral
// containers.
type actionsWant struct {
	kill, create   bool
	eph, init, reg []int
	killed         map[string]string // container ID -> reason
}

func TestComputePodActionsInitSidecarEphemeral(t *testing.T) {
	const (
		running = noderuntime.ContainerStateRunning
		exited  = noderuntime.ContainerStateExited
		created = noderuntime.ContainerStateCreated
		unknown = noderuntime.ContainerStateUnknown
	)
	type st struct {
		name  string
		state noderuntime.ContainerState
		exit  int
	}
	ready := []*runtimeapi.PodSandboxStatus{sb("s1", 0, true)}
	dead := []*runtimeapi.PodSandboxStatus{sb("s1", 0, false)}
	never, onFailure, always := corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure, corev1.RestartPolicyAlways
	twoInits := []string{"i1", "i2"}
	main := []string{"main"}
	cases := []struct {
		name      string
		policy    corev1.RestartPolicy
		inits     []string
		eph       []string
		sandboxes []*runtimeapi.PodSandboxStatus
		statuses  []st
		mutate    func(*corev1.Pod, *noderuntime.PodStatus)
		startup   map[string]noderuntime.StartupResult
		want      actionsWant
	}{
		// Init ordering.
		{name: "a new pod with init containers starts only the first one in a new sandbox",
			policy: always, inits: twoInits,
			want: actionsWant{kill: true, create: true, init: []int{0}, reg: []int{}}},
		{name: "a running init container holds back the next one and the regular containers",
			policy: always, inits: twoInits, sandboxes: ready, statuses: []st{{"i1", running, 0}},
			want: actionsWant{reg: []int{}}},
		{name: "a succeeded init container lets the next one start",
			policy: always, inits: twoInits, sandboxes: ready, statuses: []st{{"i1", exited, 0}},
			want: actionsWant{init: []int{1}, reg: []int{}}},
		{name: "when the last init container succeeded the regular containers start",
			policy: always, inits: twoInits, sandboxes: ready, statuses: []st{{"i2", exited, 0}, {"i1", exited, 0}},
			want: actionsWant{reg: []int{0}}},
		{name: "an init container left in created state is started again",
			policy: always, inits: twoInits, sandboxes: ready, statuses: []st{{"i1", created, 0}},
			want: actionsWant{init: []int{0}, reg: []int{}}},
		{name: "a pod whose regular container runs is initialized even without init statuses",
			policy: always, inits: twoInits, sandboxes: ready, statuses: []st{{"main", running, 0}},
			want: actionsWant{reg: []int{}}},
		{name: "an exited regular container does not count as initialization",
			policy: always, inits: twoInits, sandboxes: ready, statuses: []st{{"main", exited, 0}},
			want: actionsWant{init: []int{0}, reg: []int{}}},
		{name: "a changed spec of a completed init container changes nothing",
			policy: always, inits: twoInits, sandboxes: ready, statuses: []st{{"main", running, 0}, {"i2", exited, 0}, {"i1", exited, 0}},
			mutate: func(_ *corev1.Pod, s *noderuntime.PodStatus) { s.ContainerStatuses[1].Hash++ },
			want:   actionsWant{reg: []int{}}},
		// Init retry under each restart policy.
		{name: "a failed init container is retried under Always",
			policy: always, inits: twoInits, sandboxes: ready, statuses: []st{{"i1", exited, 1}},
			want: actionsWant{init: []int{0}, reg: []int{}}},
		{name: "a failed init container is retried under OnFailure",
			policy: onFailure, inits: twoInits, sandboxes: ready, statuses: []st{{"i2", exited, 2}, {"i1", exited, 0}},
			want: actionsWant{init: []int{1}, reg: []int{}}},
		{name: "a failed init container under Never kills the pod and starts nothing",
			policy: never, inits: twoInits, eph: []string{"dbg"}, sandboxes: ready, statuses: []st{{"i1", exited, 1}},
			want: actionsWant{kill: true, reg: []int{}}},
		{name: "an OOM-killed init container that exited 0 counts as failed",
			policy: never, inits: twoInits, sandboxes: ready, statuses: []st{{"i1", exited, 0}},
			mutate: func(_ *corev1.Pod, s *noderuntime.PodStatus) { s.ContainerStatuses[0].Reason = "OOMKilled" },
			want:   actionsWant{kill: true, reg: []int{}}},
		{name: "an init container in unknown state is killed and retried under Always",
			policy: always, inits: twoInits, sandboxes: ready, statuses: []st{{"i1", unknown, 0}},
			want: actionsWant{init: []int{0}, reg: []int{}, killed: map[string]string{"i1-id": killReasonUnknown}}},
		{name: "an init container in unknown state under Never kills the pod",
			policy: never, inits: twoInits, sandboxes: ready, statuses: []st{{"i1", unknown, 0}},
			want: actionsWant{kill: true, reg: []int{}}},
		// Sandbox recreation.
		{name: "a recreated sandbox runs the init containers again from the first",
			policy: always, inits: twoInits, sandboxes: dead, statuses: []st{{"main", exited, 137}, {"i2", exited, 0}, {"i1", exited, 0}},
			want: actionsWant{kill: true, create: true, init: []int{0}, reg: []int{}}},
		{name: "a recreated sandbox under OnFailure whose regular containers succeeded is not created",
			policy: onFailure, inits: twoInits, sandboxes: dead, statuses: []st{{"main", exited, 0}, {"i2", exited, 0}, {"i1", exited, 0}},
			want: actionsWant{kill: true, reg: []int{}}},
		{name: "a recreated sandbox under OnFailure that never got past init runs init again",
			policy: onFailure, inits: twoInits, sandboxes: dead, statuses: []st{{"i1", exited, 1}},
			want: actionsWant{kill: true, create: true, init: []int{0}, reg: []int{}}},
		// Sidecars: startup gating, restart, spec change.
		{name: "a running sidecar whose startup probe has not succeeded holds back the next init container",
			policy: always, inits: []string{"log-sc", "i2"}, sandboxes: ready, statuses: []st{{"log-sc", running, 0}},
			startup: map[string]noderuntime.StartupResult{"log-sc": noderuntime.StartupUnknown},
			want:    actionsWant{reg: []int{}}},
		{name: "a started sidecar lets the next init container start",
			policy: always, inits: []string{"log-sc", "i2"}, sandboxes: ready, statuses: []st{{"log-sc", running, 0}},
			startup: map[string]noderuntime.StartupResult{"log-sc": noderuntime.StartupSucceeded},
			want:    actionsWant{init: []int{1}, reg: []int{}}},
		{name: "a sidecar whose startup probe failed is killed and restarted",
			policy: always, inits: []string{"log-sc", "i2"}, sandboxes: ready, statuses: []st{{"log-sc", running, 0}},
			startup: map[string]noderuntime.StartupResult{"log-sc": noderuntime.StartupFailed},
			want:    actionsWant{init: []int{0}, reg: []int{}, killed: map[string]string{"log-sc-id": killReasonStartupProbe}}},
		{name: "a started sidecar as last init container lets the regular containers start",
			policy: always, inits: []string{"i1", "log-sc"}, sandboxes: ready, statuses: []st{{"log-sc", running, 0}, {"i1", exited, 0}},
			want: actionsWant{reg: []int{0}}},
		{name: "a pending last sidecar keeps the pod uninitialized",
			policy: always, inits: []string{"i1", "log-sc"}, sandboxes: ready, statuses: []st{{"log-sc", running, 0}, {"i1", exited, 0}},
			startup: map[string]noderuntime.StartupResult{"log-sc": noderuntime.StartupUnknown},
			want:    actionsWant{reg: []int{}}},
		{name: "a sidecar that exited after initialization is restarted beside the running pod",
			policy: always, inits: []string{"log-sc"}, sandboxes: ready, statuses: []st{{"main", running, 0}, {"log-sc", exited, 1}},
			want: actionsWant{init: []int{0}, reg: []int{}}},
		{name: "a sidecar is restarted even under Never",
			policy: never, inits: []string{"log-sc"}, sandboxes: ready, statuses: []st{{"main", running, 0}, {"log-sc", exited, 0}},
			want: actionsWant{init: []int{0}, reg: []int{}}},
		{name: "a sidecar whose status vanished after initialization is started again",
			policy: always, inits: []string{"log-sc", "i2"}, sandboxes: ready, statuses: []st{{"main", running, 0}},
			want: actionsWant{init: []int{0}, reg: []int{}}},
		{name: "a running sidecar whose spec changed is killed and restarted, the regular container kept",
			policy: always, inits: []string{"log-sc"}, sandboxes: ready, statuses: []st{{"main", running, 0}, {"log-sc", running, 0}},
			mutate: func(_ *corev1.Pod, s *noderuntime.PodStatus) { s.ContainerStatuses[1].Hash++ },
			want:   actionsWant{init: []int{0}, reg: []int{}, killed: map[string]string{"log-sc-id": killReasonSpecChanged}}},
		{name: "a regular container whose spec changed beside a sidecar is restarted alone",
			policy: always, inits: []string{"log-sc"}, sandboxes: ready, statuses: []st{{"main", running, 0}, {"log-sc", running, 0}},
			mutate: func(_ *corev1.Pod, s *noderuntime.PodStatus) { s.ContainerStatuses[0].Hash++ },
			want:   actionsWant{reg: []int{0}, killed: map[string]string{"main-id": killReasonSpecChanged}}},
		{name: "a sidecar in unknown state is killed and restarted",
			policy: always, inits: []string{"log-sc"}, sandboxes: ready, statuses: []st{{"main", running, 0}, {"log-sc", unknown, 0}},
			want: actionsWant{init: []int{0}, reg: []int{}, killed: map[string]string{"log-sc-id": killReasonUnknown}}},
		// Completion and termination with sidecars.
		{name: "a job whose regular container succeeded beside a running sidecar is killed",
			policy: never, inits: []string{"log-sc"}, sandboxes: ready, statuses: []st{{"main", exited, 0}, {"log-sc", running, 0}},
			want: actionsWant{kill: true, reg: []int{}}},
		{name: "a job under OnFailure does not restart its exited sidecar once done",
			policy: onFailure, inits: []string{"log-sc"}, sandboxes: ready, statuses: []st{{"main", exited, 0}, {"log-sc", exited, 137}},
			mutate: func(_ *corev1.Pod, s *noderuntime.PodStatus) { s.ContainerStatuses[0].SandboxID = "s1" },
			want:   actionsWant{kill: true, reg: []int{}}},
		{name: "a failed regular container under OnFailure is restarted beside its sidecar",
			policy: onFailure, inits: []string{"log-sc"}, sandboxes: ready, statuses: []st{{"main", exited, 1}, {"log-sc", running, 0}},
			want: actionsWant{reg: []int{0}}},
		// Ephemeral containers.
		{name: "an ephemeral container added to a running pod is started",
			policy: always, eph: []string{"dbg"}, sandboxes: ready, statuses: []st{{"main", running, 0}},
			want: actionsWant{eph: []int{0}, reg: []int{}}},
		{name: "an ephemeral container is started before initialization ends",
			policy: always, inits: twoInits, eph: []string{"dbg"}, sandboxes: ready, statuses: []st{{"i1", running, 0}},
			want: actionsWant{eph: []int{0}, reg: []int{}}},
		{name: "an exited ephemeral container is never restarted",
			policy: always, eph: []string{"dbg", "dbg2"}, sandboxes: ready, statuses: []st{{"main", running, 0}, {"dbg", exited, 1}},
			want: actionsWant{eph: []int{1}, reg: []int{}}},
		{name: "a new sandbox starts no ephemeral container",
			policy: always, eph: []string{"dbg"}, sandboxes: dead, statuses: []st{{"main", exited, 1}, {"dbg", exited, 0}},
			want: actionsWant{kill: true, create: true, reg: []int{0}}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pod := initPod(tt.policy, tt.inits, main, tt.eph)
			status := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: tt.sandboxes}
			for _, s := range tt.statuses {
				status.ContainerStatuses = append(status.ContainerStatuses, anyCS(pod, s.name, s.state, s.exit))
			}
			if tt.mutate != nil {
				tt.mutate(pod, status)
			}
			var startup startupFunc
			if tt.startup != nil {
				startup = func(c *corev1.Container, _ *noderuntime.ContainerStatus) noderuntime.StartupResult {
					if r, ok := tt.startup[c.Name]; ok {
						return r
					}
					return noderuntime.StartupSucceeded
				}
			}
			got := computePodActions(pod, status, startup)
			gotKilled := map[string]string{}
			for id, k := range got.ContainersToKill {
				gotKilled[id.ID] = k.Reason
			}
			want := tt.want
			if want.killed == nil {
				want.killed = map[string]string{}
			}
			if got.KillPod != want.kill || got.CreateSandbox != want.create ||
				!reflect.DeepEqual(got.EphemeralContainersToStart, want.eph) || !reflect.DeepEqual(got.InitContainersToStart, want.init) ||
				!reflect.DeepEqual(got.ContainersToStart, want.reg) || !reflect.DeepEqual(gotKilled, want.killed) {
				t.Errorf("got %s\nwant %+v", got, want)
			}
		})
	}
}
