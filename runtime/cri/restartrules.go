package cri

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// checkRestartRules refuses a container with a restartPolicyRules action
// nodekit does not run: RestartAllContainers (the kubelet's
// RestartAllContainersOnContainerExits, beta in v1.37), which restarts the
// whole pod in place. The container then waits with reason
// CreateContainerConfigError and a message naming the field, rather than
// running with the rule silently ignored. Action Restart is run
// (computePodActions, runtime.ContainerShouldRestart).
func checkRestartRules(c *corev1.Container) error {
	for i, rule := range c.RestartPolicyRules {
		if rule.Action == corev1.ContainerRestartRuleActionRestartAllContainers {
			return fmt.Errorf("%w: container %q: restartPolicyRules[%d].action RestartAllContainers is not supported by nodekit",
				noderuntime.ErrConfig, c.Name, i)
		}
	}
	return nil
}
