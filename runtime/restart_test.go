package runtime

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestContainerShouldRestart(t *testing.T) {
	t.Parallel()
	rule := func(action corev1.ContainerRestartRuleAction, op corev1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) corev1.ContainerRestartRule {
		return corev1.ContainerRestartRule{Action: action, ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}
	}
	restart, all := corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleActionRestartAllContainers
	in, notIn := corev1.ContainerRestartRuleOnExitCodesOpIn, corev1.ContainerRestartRuleOnExitCodesOpNotIn
	cases := []struct {
		name  string
		pod   corev1.RestartPolicy
		own   corev1.ContainerRestartPolicy
		rules []corev1.ContainerRestartRule
		code  int32
		want  bool
	}{
		{"the pod's Always", corev1.RestartPolicyAlways, "", nil, 0, true},
		{"the pod's empty policy is Always", "", "", nil, 0, true},
		{"the pod's OnFailure after a failure", corev1.RestartPolicyOnFailure, "", nil, 1, true},
		{"the pod's OnFailure after a success", corev1.RestartPolicyOnFailure, "", nil, 0, false},
		{"the pod's Never", corev1.RestartPolicyNever, "", nil, 1, false},
		{"own Always over the pod's Never", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyAlways, nil, 0, true},
		{"own Never over the pod's Always", corev1.RestartPolicyAlways, corev1.ContainerRestartPolicyNever, nil, 1, false},
		{"own OnFailure after a success", corev1.RestartPolicyAlways, corev1.ContainerRestartPolicyOnFailure, nil, 0, false},
		{"rules without own policy are not read", corev1.RestartPolicyNever, "", []corev1.ContainerRestartRule{rule(restart, in, 1)}, 1, false},
		{"In matches", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyNever, []corev1.ContainerRestartRule{rule(restart, in, 1, 42)}, 42, true},
		{"In does not match", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyNever, []corev1.ContainerRestartRule{rule(restart, in, 42)}, 1, false},
		{"NotIn matches", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyNever, []corev1.ContainerRestartRule{rule(restart, notIn, 0)}, 3, true},
		{"NotIn does not match", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyNever, []corev1.ContainerRestartRule{rule(restart, notIn, 0)}, 0, false},
		{"a rule that does not match falls back to own Always", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyAlways, []corev1.ContainerRestartRule{rule(restart, in, 42)}, 1, true},
		{"an unknown operator matches nothing", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyNever, []corev1.ContainerRestartRule{rule(restart, "Maybe", 1)}, 1, false},
		{"RestartAllContainers is not Restart", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyNever, []corev1.ContainerRestartRule{rule(all, in, 1)}, 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &corev1.Container{Name: "c", RestartPolicyRules: tc.rules}
			if tc.own != "" {
				own := tc.own
				c.RestartPolicy = &own
			}
			if got := ContainerShouldRestart(c, &corev1.PodSpec{RestartPolicy: tc.pod}, tc.code); got != tc.want {
				t.Fatalf("ContainerShouldRestart = %t, want %t", got, tc.want)
			}
		})
	}
}
