package runtime

import corev1 "k8s.io/api/core/v1"

// ShouldContainerBeRestarted reports whether the named container of pod should
// be (re)started given the pod's runtime status. A container that never ran
// starts; a running one does not; one in the created or unknown state
// starts again; a dead one restarts when ContainerShouldRestart says so for
// its exit code (its restartPolicyRules, then its own restartPolicy, then the
// pod's). A pod being deleted restarts nothing.
func ShouldContainerBeRestarted(container *corev1.Container, pod *corev1.Pod, status *PodStatus) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	cs := status.FindContainerStatusByName(container.Name)
	if cs == nil {
		return true
	}
	switch cs.State {
	case ContainerStateRunning:
		return false
	case ContainerStateUnknown, ContainerStateCreated:
		return true
	}
	return ContainerShouldRestart(container, &pod.Spec, int32(cs.ExitCode))
}

// ContainerShouldRestart reports whether a container that exited with
// exitCode is restarted, as the kubelet decides it with the
// ContainerRestartRules feature (beta, on by default, in v1.37): when the
// container has its own restartPolicy, the first of its restartPolicyRules
// that matches the exit code decides (action Restart restarts it), else its
// restartPolicy does; a container without one follows the pod's
// restartPolicy (Always when empty). Always restarts, OnFailure restarts
// after a non-zero exit, Never does not.
func ContainerShouldRestart(c *corev1.Container, spec *corev1.PodSpec, exitCode int32) bool {
	if c.RestartPolicy != nil {
		if rule, ok := MatchingRestartRule(c, exitCode); ok && rule.Action == corev1.ContainerRestartRuleActionRestart {
			return true
		}
		switch *c.RestartPolicy {
		case corev1.ContainerRestartPolicyAlways:
			return true
		case corev1.ContainerRestartPolicyOnFailure:
			return exitCode != 0
		case corev1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch spec.RestartPolicy {
	case corev1.RestartPolicyOnFailure:
		return exitCode != 0
	case corev1.RestartPolicyNever:
		return false
	}
	return true
}

// MatchingRestartRule returns the first of c's restartPolicyRules whose
// exitCodes match exitCode: operator In matches a listed code, NotIn any
// other. A rule without exitCodes or with another operator matches nothing.
func MatchingRestartRule(c *corev1.Container, exitCode int32) (corev1.ContainerRestartRule, bool) {
	for _, rule := range c.RestartPolicyRules {
		if rule.ExitCodes == nil {
			continue
		}
		listed := false
		for _, v := range rule.ExitCodes.Values {
			if v == exitCode {
				listed = true
				break
			}
		}
		switch rule.ExitCodes.Operator {
		case corev1.ContainerRestartRuleOnExitCodesOpIn:
			if listed {
				return rule, true
			}
		case corev1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !listed {
				return rule, true
			}
		}
	}
	return corev1.ContainerRestartRule{}, false
}

// IsSidecar reports whether c is a sidecar: an init container with
// restartPolicy Always, which keeps running beside the pod's containers.
func IsSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}
