package cri

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// withRestart gives container idx of pod its own restartPolicy and rules.
func withRestart(pod *corev1.Pod, idx int, p corev1.ContainerRestartPolicy, rules ...corev1.ContainerRestartRule) *corev1.Pod {
	pod.Spec.Containers[idx].RestartPolicy = &p
	pod.Spec.Containers[idx].RestartPolicyRules = rules
	return pod
}

// restartOn is a rule that restarts a container on exit codes (In, or
// NotIn when notIn).
func restartOn(notIn bool, codes ...int32) corev1.ContainerRestartRule {
	op := corev1.ContainerRestartRuleOnExitCodesOpIn
	if notIn {
		op = corev1.ContainerRestartRuleOnExitCodesOpNotIn
	}
	return corev1.ContainerRestartRule{Action: corev1.ContainerRestartRuleActionRestart,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}
}

// TestComputePodActionsContainerRestartRules covers the ContainerRestartRules
// feature (beta, on by default, in v1.37): a container's own restartPolicy
// overrides the pod's, and its restartPolicyRules override both for the
// exit codes they match.
func TestComputePodActionsContainerRestartRules(t *testing.T) {
	const (
		running = noderuntime.ContainerStateRunning
		exited  = noderuntime.ContainerStateExited
		unknown = noderuntime.ContainerStateUnknown
	)
	type exit struct {
		name  string
		state noderuntime.ContainerState
		code  int
	}
	pod := func(policy corev1.RestartPolicy, names ...string) *corev1.Pod {
		p := newPod("u1", names...)
		p.Spec.RestartPolicy = policy
		return p
	}
	never, always, onFailure := corev1.RestartPolicyNever, corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure
	cases := []struct {
		name       string
		pod        *corev1.Pod
		ready      bool // the sandbox is ready; else it is dead and recreated
		containers []exit
		want       want
	}{
		{"a container's Always restarts it under the pod's Never",
			withRestart(pod(never, "a", "b"), 0, corev1.ContainerRestartPolicyAlways), true,
			[]exit{{"a", exited, 1}, {"b", running, 0}}, want{sandboxID: "s1", start: []int{0}}},
		{"a container's Always restarts a success too",
			withRestart(pod(never, "a"), 0, corev1.ContainerRestartPolicyAlways), true,
			[]exit{{"a", exited, 0}}, want{sandboxID: "s1", start: []int{0}}},
		{"a container's Never keeps it down under the pod's Always, and the pod is killed",
			withRestart(pod(always, "a"), 0, corev1.ContainerRestartPolicyNever), true,
			[]exit{{"a", exited, 1}}, want{kill: true, sandboxID: "s1", start: []int{}}},
		{"a container's OnFailure does not restart a success under the pod's Always",
			withRestart(pod(always, "a", "b"), 0, corev1.ContainerRestartPolicyOnFailure), true,
			[]exit{{"a", exited, 0}, {"b", running, 0}}, want{sandboxID: "s1", start: []int{}}},
		{"a container's OnFailure restarts a failure under the pod's Never",
			withRestart(pod(never, "a"), 0, corev1.ContainerRestartPolicyOnFailure), true,
			[]exit{{"a", exited, 3}}, want{sandboxID: "s1", start: []int{0}}},
		{"a container without its own policy follows the pod's",
			withRestart(pod(never, "a", "b"), 0, corev1.ContainerRestartPolicyAlways), true,
			[]exit{{"a", running, 0}, {"b", exited, 1}}, want{sandboxID: "s1", start: []int{}}},
		{"a rule In matching the exit code restarts a container whose policy is Never",
			withRestart(pod(never, "a"), 0, corev1.ContainerRestartPolicyNever, restartOn(false, 42)), true,
			[]exit{{"a", exited, 42}}, want{sandboxID: "s1", start: []int{0}}},
		{"a rule In not matching falls back to the container's Never",
			withRestart(pod(never, "a"), 0, corev1.ContainerRestartPolicyNever, restartOn(false, 42)), true,
			[]exit{{"a", exited, 1}}, want{kill: true, sandboxID: "s1", start: []int{}}},
		{"a rule NotIn restarts on any other code",
			withRestart(pod(never, "a"), 0, corev1.ContainerRestartPolicyNever, restartOn(true, 0, 1)), true,
			[]exit{{"a", exited, 7}}, want{sandboxID: "s1", start: []int{0}}},
		{"a rule NotIn does not restart on a listed code",
			withRestart(pod(never, "a"), 0, corev1.ContainerRestartPolicyNever, restartOn(true, 0, 1)), true,
			[]exit{{"a", exited, 1}}, want{kill: true, sandboxID: "s1", start: []int{}}},
		{"the first matching rule decides, in order",
			withRestart(pod(always, "a"), 0, corev1.ContainerRestartPolicyNever, restartOn(false, 5), restartOn(true, 5)), true,
			[]exit{{"a", exited, 5}}, want{sandboxID: "s1", start: []int{0}}},
		{"a rule restarts a success it matches under OnFailure",
			withRestart(pod(always, "a"), 0, corev1.ContainerRestartPolicyOnFailure, restartOn(false, 0)), true,
			[]exit{{"a", exited, 0}}, want{sandboxID: "s1", start: []int{0}}},
		{"a rule does not restart the containers of a pod being deleted",
			func() *corev1.Pod {
				p := withRestart(pod(never, "a"), 0, corev1.ContainerRestartPolicyNever, restartOn(false, 42))
				p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
				return p
			}(), true,
			[]exit{{"a", exited, 42}}, want{kill: true, sandboxID: "s1", start: []int{}}},
		{"an unknown container with its own Never is still killed and started (it has no exit code)",
			withRestart(pod(never, "a"), 0, corev1.ContainerRestartPolicyNever), true,
			[]exit{{"a", unknown, 0}}, want{sandboxID: "s1", start: []int{0}, killed: map[string]string{"a-id": killReasonUnknown}}},
		{"a recreated sandbox under OnFailure restarts a succeeded container whose own policy is Always",
			withRestart(pod(onFailure, "a", "b"), 0, corev1.ContainerRestartPolicyAlways), false,
			[]exit{{"a", exited, 0}, {"b", exited, 0}}, want{kill: true, create: true, sandboxID: "s1", attempt: 1, start: []int{0}}},
		{"a recreated sandbox under Always skips a succeeded container whose own policy is OnFailure",
			withRestart(pod(always, "a", "b"), 1, corev1.ContainerRestartPolicyOnFailure), false,
			[]exit{{"a", exited, 0}, {"b", exited, 0}}, want{kill: true, create: true, sandboxID: "s1", attempt: 1, start: []int{0}}},
		{"under the pod's Never a dead sandbox is not recreated even for a container's Always",
			withRestart(pod(never, "a"), 0, corev1.ContainerRestartPolicyAlways), false,
			[]exit{{"a", exited, 1}}, want{kill: true, sandboxID: "s1", attempt: 1, start: []int{}}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status := &noderuntime.PodStatus{ID: tt.pod.UID, SandboxStatuses: []*runtimeapi.PodSandboxStatus{sb("s1", 0, tt.ready)}}
			for _, e := range tt.containers {
				status.ContainerStatuses = append(status.ContainerStatuses, cs(tt.pod, e.name, e.state, e.code))
			}
			got := computePodActions(tt.pod, status, nil)
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

// TestProbeKillsFollowTheContainersOwnPolicy: a container killed for a
// failed liveness probe is started again unless its own restartPolicy (else
// the pod's) is Never; its rules are not asked, it has no exit code.
func TestProbeKillsFollowTheContainersOwnPolicy(t *testing.T) {
	cases := []struct {
		name    string
		pod     *corev1.Pod
		restart bool
	}{
		{"own Always under the pod's Never", withRestart(newPodPolicy(corev1.RestartPolicyNever), 0, corev1.ContainerRestartPolicyAlways), true},
		{"own Never under the pod's Always", withRestart(newPodPolicy(corev1.RestartPolicyAlways), 0, corev1.ContainerRestartPolicyNever, restartOn(false, 137)), false},
		{"own OnFailure under the pod's Never", withRestart(newPodPolicy(corev1.RestartPolicyNever), 0, corev1.ContainerRestartPolicyOnFailure), true},
		{"the pod's Never", newPodPolicy(corev1.RestartPolicyNever), false},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			status := &noderuntime.PodStatus{ID: tt.pod.UID, SandboxStatuses: []*runtimeapi.PodSandboxStatus{sb("s1", 0, true)},
				ContainerStatuses: []*noderuntime.ContainerStatus{cs(tt.pod, "a", noderuntime.ContainerStateRunning, 0)}}
			got := computePodActions(tt.pod, status, fakeProbes{failedLiveness: map[string]bool{"a": true}})
			if _, killed := got.ContainersToKill[status.ContainerStatuses[0].ID]; !killed {
				t.Fatalf("got %s, want a killed", got)
			}
			if restarted := len(got.ContainersToStart) == 1; restarted != tt.restart {
				t.Fatalf("got %s, want restarted=%t", got, tt.restart)
			}
		})
	}
}

func newPodPolicy(p corev1.RestartPolicy) *corev1.Pod {
	pod := newPod("u1", "a")
	pod.Spec.RestartPolicy = p
	return pod
}

// TestInitContainerRestartRules: a failed regular init container with its
// own restartPolicy (or rules) is restarted or fails the pod by it, not by
// the pod's restartPolicy.
func TestInitContainerRestartRules(t *testing.T) {
	cases := []struct {
		name   string
		policy corev1.RestartPolicy
		own    corev1.ContainerRestartPolicy
		rules  []corev1.ContainerRestartRule
		code   int
		fail   bool
	}{
		{"own OnFailure under the pod's Never restarts it", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyOnFailure, nil, 1, false},
		{"own Never under the pod's Always fails the pod", corev1.RestartPolicyAlways, corev1.ContainerRestartPolicyNever, nil, 1, true},
		{"a matching rule restarts it under own Never", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyNever, []corev1.ContainerRestartRule{restartOn(false, 3)}, 3, false},
		{"a rule that does not match leaves own Never", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyNever, []corev1.ContainerRestartRule{restartOn(false, 3)}, 4, true},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			pod := initPod(tt.policy, []string{"init"}, []string{"a"}, nil)
			own := tt.own
			pod.Spec.InitContainers[0].RestartPolicy = &own
			pod.Spec.InitContainers[0].RestartPolicyRules = tt.rules
			status := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: []*runtimeapi.PodSandboxStatus{sb("s1", 0, true)},
				ContainerStatuses: []*noderuntime.ContainerStatus{anyCS(pod, "init", noderuntime.ContainerStateExited, tt.code)}}
			got := computePodActions(pod, status, nil)
			if tt.fail {
				if !got.KillPod || len(got.InitContainersToStart) != 0 {
					t.Fatalf("got %s, want the pod killed", got)
				}
				return
			}
			if got.KillPod || !reflect.DeepEqual(got.InitContainersToStart, []int{0}) {
				t.Fatalf("got %s, want init container 0 restarted", got)
			}
		})
	}
}

func TestRestartAllContainersRuleIsRefusedNamingTheField(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "a", "b")
	never := corev1.ContainerRestartPolicyNever
	pod.Spec.Containers[1].RestartPolicy = &never
	pod.Spec.Containers[1].RestartPolicyRules = []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	res := e.sync(t, pod)
	step := failedSteps(res)["StartContainer/b"]
	if !errors.Is(step.Err, noderuntime.ErrConfig) || !strings.Contains(step.Err.Error(), "restartPolicyRules[0].action RestartAllContainers is not supported") {
		t.Fatalf("container b: err %v, want ErrConfig naming restartPolicyRules[0].action", step.Err)
	}
	if reason, _ := res.Waiting("b"); reason != "CreateContainerConfigError" {
		t.Errorf("waiting reason = %q, want CreateContainerConfigError", reason)
	}
	if names := e.rs.createdNames(); len(names) != 1 || names[0] != "a" {
		t.Errorf("created %v, want only a", names)
	}
}
