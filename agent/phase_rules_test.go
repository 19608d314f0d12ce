package agent

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// TestPodPhaseWithContainerRestartRules: a container's own restartPolicy
// and restartPolicyRules (ContainerRestartRules, beta and on in v1.37)
// decide whether its exit ends the pod, as the kubelet's getPhase does.
func TestPodPhaseWithContainerRestartRules(t *testing.T) {
	t.Parallel()
	restartOn := func(codes ...int32) []corev1.ContainerRestartRule {
		return []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart,
			ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: codes}}}
	}
	cases := []struct {
		name     string
		policy   corev1.RestartPolicy
		own      corev1.ContainerRestartPolicy // of container a; "" for none
		rules    []corev1.ContainerRestartRule
		a        *noderuntime.ContainerStatus
		waiting  bool // a waits to be restarted (CrashLoopBackOff)
		terminal bool
		want     corev1.PodPhase
	}{
		{"own Always under the pod's Never keeps a failed pod running", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyAlways, nil,
			exited("a", 1, 0), false, false, corev1.PodRunning},
		{"own Always in back-off under the pod's Never is running", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyAlways, nil,
			exited("a", 1, 1), true, false, corev1.PodRunning},
		{"own Never under the pod's Always fails the pod", corev1.RestartPolicyAlways, corev1.ContainerRestartPolicyNever, nil,
			exited("a", 1, 0), false, false, corev1.PodFailed},
		{"own Never under the pod's Always with exit 0 succeeds", corev1.RestartPolicyAlways, corev1.ContainerRestartPolicyNever, nil,
			exited("a", 0, 0), false, false, corev1.PodSucceeded},
		{"own OnFailure under the pod's Always with exit 0 succeeds", corev1.RestartPolicyAlways, corev1.ContainerRestartPolicyOnFailure, nil,
			exited("a", 0, 0), false, false, corev1.PodSucceeded},
		{"a matching rule keeps the pod running under Never", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyNever, restartOn(42),
			exited("a", 42, 0), false, false, corev1.PodRunning},
		{"a rule that does not match leaves the pod failed", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyNever, restartOn(42),
			exited("a", 1, 0), false, false, corev1.PodFailed},
		{"a terminal pod is failed whatever its rules", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyNever, restartOn(42),
			exited("a", 42, 0), false, true, corev1.PodFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := testPod(tc.policy, "a")
			if tc.own != "" {
				own := tc.own
				pod.Spec.Containers[0].RestartPolicy = &own
				pod.Spec.Containers[0].RestartPolicyRules = tc.rules
			}
			rs := &noderuntime.PodStatus{ID: pod.UID, ContainerStatuses: []*noderuntime.ContainerStatus{tc.a}, SandboxStatuses: readySandbox()}
			var waiting map[string]waitingReason
			if tc.waiting {
				waiting = map[string]waitingReason{"a": {Reason: "CrashLoopBackOff"}}
			}
			got := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, waiting: waiting, terminal: tc.terminal, now: t0})
			if tc.waiting && got.ContainerStatuses[0].State.Waiting == nil {
				t.Fatalf("state = %+v, want waiting", got.ContainerStatuses[0].State)
			}
			if got.Phase != tc.want {
				t.Fatalf("phase = %s, want %s", got.Phase, tc.want)
			}
		})
	}
}

// TestPodPhaseInitContainerRestartRules: a failed regular init container
// fails the pod only when it will not be restarted.
func TestPodPhaseInitContainerRestartRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		policy corev1.RestartPolicy
		own    corev1.ContainerRestartPolicy
		want   corev1.PodPhase
	}{
		{"own OnFailure under the pod's Never is pending", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyOnFailure, corev1.PodPending},
		{"own Never under the pod's Always is failed", corev1.RestartPolicyAlways, corev1.ContainerRestartPolicyNever, corev1.PodFailed},
		{"the pod's Never is failed", corev1.RestartPolicyNever, "", corev1.PodFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := testPod(tc.policy, "a")
			init := corev1.Container{Name: "init", Image: "img"}
			if tc.own != "" {
				own := tc.own
				init.RestartPolicy = &own
			}
			pod.Spec.InitContainers = []corev1.Container{init}
			rs := &noderuntime.PodStatus{ID: pod.UID, ContainerStatuses: []*noderuntime.ContainerStatus{exited("init", 1, 0)}, SandboxStatuses: readySandbox()}
			got := generateAPIPodStatus(statusInput{pod: pod, runtime: rs, now: t0})
			if got.Phase != tc.want {
				t.Fatalf("phase = %s, want %s", got.Phase, tc.want)
			}
		})
	}
}
