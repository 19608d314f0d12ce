package agent

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodekit/nodekit/internal/qos"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func testPod(policy corev1.RestartPolicy, names ...string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"}}
	pod.Spec.RestartPolicy = policy
	for _, n := range names {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: n, Image: "img"})
	}
	return pod
}

func running(name string, restarts int) *noderuntime.ContainerStatus {
	return &noderuntime.ContainerStatus{ID: noderuntime.ContainerID{Type: "containerd", ID: name + "-run"},
		Name: name, State: noderuntime.ContainerStateRunning, StartedAt: t0, RestartCount: restarts, ImageRef: "sha256:abc"}
}

func exited(name string, code, restarts int) *noderuntime.ContainerStatus {
	return &noderuntime.ContainerStatus{ID: noderuntime.ContainerID{Type: "containerd", ID: name + "-exit"},
		Name: name, State: noderuntime.ContainerStateExited, ExitCode: code, StartedAt: t0,
		FinishedAt: t0.Add(time.Second), RestartCount: restarts, Reason: "Error"}
}

func readySandbox() []*runtimeapi.PodSandboxStatus {
	return []*runtimeapi.PodSandboxStatus{{Id: "sb", State: runtimeapi.PodSandboxState_SANDBOX_READY}}
}

func TestPodPhase(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		policy   corev1.RestartPolicy
		statuses []*noderuntime.ContainerStatus
		waiting  map[string]waitingReason
		terminal bool
		want     corev1.PodPhase
	}{
		{"a pod with no container yet is pending", corev1.RestartPolicyAlways, nil, nil, false, corev1.PodPending},
		{"a pod with one of two containers running is pending", corev1.RestartPolicyAlways,
			[]*noderuntime.ContainerStatus{running("a", 0)}, nil, false, corev1.PodPending},
		{"a pod with both containers running is running", corev1.RestartPolicyAlways,
			[]*noderuntime.ContainerStatus{running("a", 0), running("b", 0)}, nil, false, corev1.PodRunning},
		{"all exited under Always is still running", corev1.RestartPolicyAlways,
			[]*noderuntime.ContainerStatus{exited("a", 1, 0), exited("b", 0, 0)}, nil, false, corev1.PodRunning},
		{"all exited 0 under Never is succeeded", corev1.RestartPolicyNever,
			[]*noderuntime.ContainerStatus{exited("a", 0, 0), exited("b", 0, 0)}, nil, false, corev1.PodSucceeded},
		{"one failure under Never is failed", corev1.RestartPolicyNever,
			[]*noderuntime.ContainerStatus{exited("a", 0, 0), exited("b", 3, 0)}, nil, false, corev1.PodFailed},
		{"one failure under OnFailure keeps running", corev1.RestartPolicyOnFailure,
			[]*noderuntime.ContainerStatus{exited("a", 0, 0), exited("b", 3, 0)}, nil, false, corev1.PodRunning},
		{"all exited 0 under OnFailure is succeeded", corev1.RestartPolicyOnFailure,
			[]*noderuntime.ContainerStatus{exited("a", 0, 0), exited("b", 0, 0)}, nil, false, corev1.PodSucceeded},
		{"a crash-looping container beside a running one is running", corev1.RestartPolicyAlways,
			[]*noderuntime.ContainerStatus{running("a", 0), exited("b", 1, 2)},
			map[string]waitingReason{"b": {Reason: "CrashLoopBackOff"}}, false, corev1.PodRunning},
		{"a terminal pod with a killed container is failed", corev1.RestartPolicyAlways,
			[]*noderuntime.ContainerStatus{exited("a", 137, 0), exited("b", 0, 0)}, nil, true, corev1.PodFailed},
		{"a terminal pod whose containers exited 0 succeeded", corev1.RestartPolicyAlways,
			[]*noderuntime.ContainerStatus{exited("a", 0, 0), exited("b", 0, 0)}, nil, true, corev1.PodSucceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := testPod(tc.policy, "a", "b")
			rs := &noderuntime.PodStatus{ID: pod.UID, ContainerStatuses: tc.statuses, SandboxStatuses: readySandbox()}
			got := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, waiting: tc.waiting, terminal: tc.terminal, now: t0})
			if got.Phase != tc.want {
				t.Fatalf("phase = %s, want %s", got.Phase, tc.want)
			}
		})
	}
}

func TestContainerStatusesShowRestartsAndLastState(t *testing.T) {
	t.Parallel()
	pod := testPod(corev1.RestartPolicyAlways, "a")
	rs := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: readySandbox(), IPs: []string{"10.250.0.7"},
		ContainerStatuses: []*noderuntime.ContainerStatus{running("a", 1), exited("a", 137, 0)}}
	got := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, nodeIPs: []string{"127.0.0.1"}, now: t0})
	cs := got.ContainerStatuses[0]
	if cs.RestartCount != 1 || cs.State.Running == nil || !cs.Ready {
		t.Fatalf("want running, ready, restartCount 1; got %+v", cs)
	}
	if cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 137 {
		t.Fatalf("lastState = %+v, want terminated with 137", cs.LastTerminationState)
	}
	if cs.ContainerID != "containerd://a-run" || cs.ImageID != "sha256:abc" {
		t.Fatalf("ids = %q %q", cs.ContainerID, cs.ImageID)
	}
	if got.PodIP != "10.250.0.7" || got.HostIP != "127.0.0.1" || got.StartTime == nil {
		t.Fatalf("addresses/start time wrong: %+v", got)
	}
	for _, c := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady, corev1.PodInitialized, corev1.PodScheduled, corev1.PodReadyToStartContainers} {
		if cond := findCondition(got.Conditions, c); cond == nil || cond.Status != corev1.ConditionTrue {
			t.Fatalf("condition %s = %+v, want True", c, cond)
		}
	}
}

func TestCrashLoopShowsWaitingWithLastState(t *testing.T) {
	t.Parallel()
	pod := testPod(corev1.RestartPolicyAlways, "a")
	rs := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: readySandbox(),
		ContainerStatuses: []*noderuntime.ContainerStatus{exited("a", 1, 3)}}
	waiting := map[string]waitingReason{"a": {Reason: "CrashLoopBackOff", Message: "back-off 40s"}}
	got := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, waiting: waiting, now: t0})
	cs := got.ContainerStatuses[0]
	if cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" {
		t.Fatalf("state = %+v, want waiting CrashLoopBackOff", cs.State)
	}
	if cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 1 || cs.RestartCount != 3 {
		t.Fatalf("lastState/restarts wrong: %+v", cs)
	}
	ready := findCondition(got.Conditions, corev1.PodReady)
	if ready.Status != corev1.ConditionFalse || ready.Reason != reasonContainersNotReady {
		t.Fatalf("ready = %+v", ready)
	}
}

func TestNewContainerWaitsCreatingAndKeepsTransitionTimes(t *testing.T) {
	t.Parallel()
	pod := testPod(corev1.RestartPolicyAlways, "a")
	rs := &noderuntime.PodStatus{ID: pod.UID}
	first := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, now: t0})
	if w := first.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != reasonContainerCreating {
		t.Fatalf("state = %+v, want ContainerCreating", first.ContainerStatuses[0].State)
	}
	second := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, old: first, now: t0.Add(time.Minute)})
	a, b := findCondition(first.Conditions, corev1.PodReady), findCondition(second.Conditions, corev1.PodReady)
	if !a.LastTransitionTime.Equal(&b.LastTransitionTime) {
		t.Fatalf("transition time moved without a transition: %v -> %v", a.LastTransitionTime, b.LastTransitionTime)
	}
	if !second.StartTime.Equal(first.StartTime) {
		t.Fatal("start time must be kept")
	}
}

func TestTerminalPhaseIsNeverLeft(t *testing.T) {
	t.Parallel()
	pod := testPod(corev1.RestartPolicyNever, "a")
	old := &corev1.PodStatus{Phase: corev1.PodSucceeded}
	rs := &noderuntime.PodStatus{ID: pod.UID}
	if got := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, old: old, now: t0}); got.Phase != corev1.PodSucceeded {
		t.Fatalf("phase = %s, want Succeeded kept", got.Phase)
	}
	// An evicted pod whose container then exits 0 stays Failed, with the
	// eviction's reason and message.
	evicted := &corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory. "}
	rs = &noderuntime.PodStatus{ID: pod.UID, ContainerStatuses: []*noderuntime.ContainerStatus{exited("a", 0, 0)}}
	got := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, old: evicted, terminal: true, now: t0})
	if got.Phase != corev1.PodFailed || got.Reason != "Evicted" || got.Message != evicted.Message {
		t.Fatalf("status %s %q %q, want the eviction's Failed kept", got.Phase, got.Reason, got.Message)
	}
}

func TestQOSClass(t *testing.T) {
	t.Parallel()
	q := resource.MustParse
	cases := []struct {
		name string
		res  corev1.ResourceRequirements
		want corev1.PodQOSClass
	}{
		{"no resources is best effort", corev1.ResourceRequirements{}, corev1.PodQOSBestEffort},
		{"equal cpu and memory limits are guaranteed", corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourceMemory: q("1Gi")}}, corev1.PodQOSGuaranteed},
		{"a request alone is burstable", corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}}, corev1.PodQOSBurstable},
		{"requests below limits are burstable", corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("1Gi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourceMemory: q("1Gi")}}, corev1.PodQOSBurstable},
	}
	for _, tc := range cases {
		pod := testPod(corev1.RestartPolicyAlways, "a")
		pod.Spec.Containers[0].Resources = tc.res
		if got := qos.PodClass(pod); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}
