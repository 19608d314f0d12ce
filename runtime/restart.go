package runtime

import corev1 "k8s.io/api/core/v1"

// ShouldContainerBeRestarted reports whether the named container of pod should
// be (re)started given the pod's runtime status, following its restart
// policy: the container's own restartPolicy when set (Always for a sidecar,
// an init container with restartPolicy Always), else the pod's. A container
// that never ran starts; a running one does not; a dead one restarts under
// Always, under OnFailure only after a failure, and never under Never. A pod
// being deleted restarts nothing.
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
	policy := pod.Spec.RestartPolicy
	if container.RestartPolicy != nil {
		policy = corev1.RestartPolicy(*container.RestartPolicy)
	}
	switch policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return cs.ExitCode != 0
	}
	return true
}

// IsSidecar reports whether c is a sidecar: an init container with
// restartPolicy Always, which keeps running beside the pod's containers.
func IsSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}
