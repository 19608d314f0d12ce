package agent

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// sidecarPod returns a pod with the named init containers (a name ending
// in "-sc" is a sidecar), one regular container "main" and the named
// ephemeral containers.
func sidecarPod(policy corev1.RestartPolicy, inits []string, ephemeral ...string) *corev1.Pod {
	pod := testPod(policy, "main")
	always := corev1.ContainerRestartPolicyAlways
	for _, n := range inits {
		c := corev1.Container{Name: n, Image: "img"}
		if strings.HasSuffix(n, "-sc") {
			c.RestartPolicy = &always
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	}
	for _, n := range ephemeral {
		pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: n, Image: "img"}})
	}
	return pod
}

// inSandbox puts runtime statuses into the ready sandbox "sb".
func inSandbox(css ...*noderuntime.ContainerStatus) []*noderuntime.ContainerStatus {
	for _, cs := range css {
		cs.SandboxID = "sb"
	}
	return css
}

func TestPodPhaseWithInitContainersAndSidecars(t *testing.T) {
	t.Parallel()
	never, onFailure, always := corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure, corev1.RestartPolicyAlways
	cases := []struct {
		name     string
		policy   corev1.RestartPolicy
		inits    []string
		statuses []*noderuntime.ContainerStatus
		waiting  map[string]waitingReason
		terminal bool
		want     corev1.PodPhase
	}{
		{"a running init container keeps the pod pending", always, []string{"i1"},
			inSandbox(running("i1", 0)), nil, false, corev1.PodPending},
		{"a failed init container under Never fails the pod", never, []string{"i1"},
			inSandbox(exited("i1", 1, 0)), nil, false, corev1.PodFailed},
		{"a failed init container under OnFailure keeps the pod pending", onFailure, []string{"i1"},
			inSandbox(exited("i1", 1, 0)), map[string]waitingReason{"i1": {Reason: "CrashLoopBackOff"}}, false, corev1.PodPending},
		{"a sidecar that never started keeps the pod pending", always, []string{"log-sc"},
			nil, nil, false, corev1.PodPending},
		{"a running sidecar and regular container are running", always, []string{"log-sc"},
			inSandbox(running("main", 0), running("log-sc", 0)), nil, false, corev1.PodRunning},
		{"a job that succeeded beside a running sidecar is still running until the sidecar stops", never, []string{"log-sc"},
			inSandbox(exited("main", 0, 0), running("log-sc", 0)), nil, false, corev1.PodRunning},
		{"a job that succeeded and whose sidecar was stopped succeeded", never, []string{"log-sc"},
			inSandbox(exited("main", 0, 0), exited("log-sc", 137, 0)), nil, false, corev1.PodSucceeded},
		{"a terminal job whose sidecar was killed succeeded", onFailure, []string{"i1", "log-sc"},
			inSandbox(exited("main", 0, 0), exited("log-sc", 137, 0), exited("i1", 0, 0)), nil, true, corev1.PodSucceeded},
		{"a job that failed beside its sidecar under Never failed", never, []string{"log-sc"},
			inSandbox(exited("main", 2, 0), exited("log-sc", 137, 0)), nil, false, corev1.PodFailed},
		{"a crash-looping sidecar of an initialized pod does not make it pending", always, []string{"log-sc"},
			inSandbox(running("main", 0), exited("log-sc", 1, 3)), map[string]waitingReason{"log-sc": {Reason: "CrashLoopBackOff"}}, false, corev1.PodRunning},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := sidecarPod(tc.policy, tc.inits)
			rs := &noderuntime.PodStatus{ID: pod.UID, ContainerStatuses: tc.statuses, SandboxStatuses: readySandbox()}
			got := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, waiting: tc.waiting, terminal: tc.terminal, now: t0})
			if got.Phase != tc.want {
				t.Fatalf("phase = %s, want %s", got.Phase, tc.want)
			}
		})
	}
}

func TestPodPhaseWaitsForASidecarToStartOnlyBeforeInitialization(t *testing.T) {
	t.Parallel()
	pod := sidecarPod(corev1.RestartPolicyAlways, []string{"log-sc"})
	s := &corev1.PodStatus{
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "log-sc", Started: ptrTo(false),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
	}
	if got := podPhase(pod, s, false, false); got != corev1.PodPending {
		t.Errorf("before initialization: phase = %s, want Pending", got)
	}
	if got := podPhase(pod, s, false, true); got != corev1.PodRunning {
		t.Errorf("after initialization: phase = %s, want Running", got)
	}
}

func TestInitContainerStatusesAndInitializedCondition(t *testing.T) {
	t.Parallel()
	pod := sidecarPod(corev1.RestartPolicyAlways, []string{"i1", "log-sc"})
	rs := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: readySandbox(),
		ContainerStatuses: inSandbox(running("main", 0), running("log-sc", 0), exited("i1", 0, 0))}
	got := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, now: t0})
	if len(got.InitContainerStatuses) != 2 || got.InitContainerStatuses[0].Name != "i1" || got.InitContainerStatuses[1].Name != "log-sc" {
		t.Fatalf("init statuses %+v, want i1 and log-sc in spec order", got.InitContainerStatuses)
	}
	i1, sc := got.InitContainerStatuses[0], got.InitContainerStatuses[1]
	if i1.State.Terminated == nil || !i1.Ready || *i1.Started {
		t.Errorf("i1 = %+v, want terminated, ready, not started", i1)
	}
	if sc.State.Running == nil || !sc.Ready || !*sc.Started {
		t.Errorf("sidecar = %+v, want running, ready and started", sc)
	}
	if c := findCondition(got.Conditions, corev1.PodInitialized); c.Status != corev1.ConditionTrue {
		t.Errorf("Initialized = %+v, want True", c)
	}
	if got.Phase != corev1.PodRunning {
		t.Errorf("phase = %s, want Running", got.Phase)
	}
}

func TestPodInitializingWhileInitContainersRun(t *testing.T) {
	t.Parallel()
	pod := sidecarPod(corev1.RestartPolicyAlways, []string{"i1", "log-sc"})
	rs := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: readySandbox(), ContainerStatuses: inSandbox(running("i1", 0))}
	got := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, now: t0})
	if w := got.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != reasonPodInitializing {
		t.Errorf("main = %+v, want waiting PodInitializing", got.ContainerStatuses[0].State)
	}
	if got.InitContainerStatuses[0].Ready {
		t.Error("a running init container must not be ready")
	}
	c := findCondition(got.Conditions, corev1.PodInitialized)
	want := "containers with incomplete status: [i1 log-sc]"
	if c.Status != corev1.ConditionFalse || c.Reason != reasonContainersNotInitialized || c.Message != want {
		t.Errorf("Initialized = %+v, want False with %q", c, want)
	}
	ready := findCondition(got.Conditions, corev1.ContainersReady)
	if ready.Status != corev1.ConditionFalse || ready.Message != "containers with unready status: [log-sc main]" {
		t.Errorf("ContainersReady = %+v, want the sidecar and main unready", ready)
	}
	if got.Phase != corev1.PodPending {
		t.Errorf("phase = %s, want Pending", got.Phase)
	}
}

func TestCrashLoopingInitContainerWaitsWithItsLastState(t *testing.T) {
	t.Parallel()
	pod := sidecarPod(corev1.RestartPolicyAlways, []string{"i1"})
	rs := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: readySandbox(), ContainerStatuses: inSandbox(exited("i1", 1, 2))}
	waiting := map[string]waitingReason{"i1": {Reason: "CrashLoopBackOff", Message: "back-off 20s"}}
	got := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, waiting: waiting, now: t0})
	i1 := got.InitContainerStatuses[0]
	if i1.State.Waiting == nil || i1.State.Waiting.Reason != "CrashLoopBackOff" || i1.LastTerminationState.Terminated == nil || i1.RestartCount != 2 {
		t.Fatalf("i1 = %+v, want waiting CrashLoopBackOff with its last exit", i1)
	}
	if c := findCondition(got.Conditions, corev1.PodInitialized); c.Status != corev1.ConditionFalse {
		t.Fatalf("Initialized = %+v, want False", c)
	}
}

func TestRemovedInitContainerOfAnInitializedPodCountsAsCompleted(t *testing.T) {
	t.Parallel()
	pod := sidecarPod(corev1.RestartPolicyAlways, []string{"i1"})
	rs := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: readySandbox(), ContainerStatuses: inSandbox(running("main", 0))}
	got := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, now: t0})
	i1 := got.InitContainerStatuses[0]
	if i1.State.Terminated == nil || i1.State.Terminated.Reason != "Completed" || !i1.Ready {
		t.Fatalf("i1 = %+v, want terminated Completed", i1)
	}
	if c := findCondition(got.Conditions, corev1.PodInitialized); c.Status != corev1.ConditionTrue {
		t.Fatalf("Initialized = %+v, want True", c)
	}
}

func TestEphemeralContainerStatuses(t *testing.T) {
	t.Parallel()
	pod := sidecarPod(corev1.RestartPolicyAlways, nil, "dbg", "dbg2")
	rs := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: readySandbox(),
		ContainerStatuses: inSandbox(running("main", 0), running("dbg", 0))}
	got := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, now: t0})
	if len(got.EphemeralContainerStatuses) != 2 {
		t.Fatalf("ephemeral statuses = %+v, want two", got.EphemeralContainerStatuses)
	}
	dbg, dbg2 := got.EphemeralContainerStatuses[0], got.EphemeralContainerStatuses[1]
	if dbg.Name != "dbg" || dbg.State.Running == nil || dbg.Ready || dbg.Started != nil {
		t.Errorf("dbg = %+v, want running, never ready, no started flag", dbg)
	}
	if dbg2.State.Waiting == nil {
		t.Errorf("dbg2 = %+v, want waiting", dbg2)
	}
	if got.Phase != corev1.PodRunning || findCondition(got.Conditions, corev1.PodReady).Status != corev1.ConditionTrue {
		t.Errorf("ephemeral containers must not change phase %s or readiness", got.Phase)
	}
	rs.ContainerStatuses = inSandbox(running("main", 0), exited("dbg", 0, 0))
	got = generateAPIPodStatus(statusInput{pod: pod, runtime: rs, waiting: map[string]waitingReason{"dbg": {Reason: "x"}}, now: t0})
	if got.EphemeralContainerStatuses[0].State.Terminated == nil {
		t.Errorf("a completed ephemeral container = %+v, want terminated", got.EphemeralContainerStatuses[0])
	}
}

func TestContainersReadyOfAFailedPod(t *testing.T) {
	t.Parallel()
	pod := sidecarPod(corev1.RestartPolicyNever, []string{"i1"})
	rs := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: readySandbox(), ContainerStatuses: inSandbox(exited("i1", 1, 0))}
	got := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, now: t0})
	if got.Phase != corev1.PodFailed {
		t.Fatalf("phase = %s, want Failed", got.Phase)
	}
	for _, typ := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		if c := findCondition(got.Conditions, typ); c.Status != corev1.ConditionFalse || c.Reason != reasonPodFailed {
			t.Errorf("%s = %+v, want False PodFailed", typ, c)
		}
	}
}

func TestVanishedRunningContainerKeepsThePodOutOfPending(t *testing.T) {
	t.Parallel()
	pod := testPod(corev1.RestartPolicyAlways, "a")
	old := &corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "a", RestartCount: 1,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
	rs := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: []*runtimeapi.PodSandboxStatus{{Id: "sb", State: runtimeapi.PodSandboxState_SANDBOX_READY}}}
	got := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, old: old, now: t0})
	a := got.ContainerStatuses[0]
	if a.LastTerminationState.Terminated == nil || a.LastTerminationState.Terminated.Reason != "ContainerStatusUnknown" || a.RestartCount != 2 {
		t.Fatalf("a = %+v, want a ContainerStatusUnknown last state and one more restart", a)
	}
	if got.Phase != corev1.PodRunning {
		t.Fatalf("phase = %s, want Running (restarting)", got.Phase)
	}
}
