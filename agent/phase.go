package agent

import (
	corev1 "k8s.io/api/core/v1"
)

// podPhase computes the pod phase from its container statuses, as the kubelet
// does: Pending while an init container or a regular container has not
// started, Running while any container runs or will be restarted, and
// Succeeded or Failed once every container has stopped for good.
func podPhase(pod *corev1.Pod, s *corev1.PodStatus, terminal bool) corev1.PodPhase {
	initPending, initFailed := initContainerCounts(pod, s)
	if initFailed > 0 && pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
		return corev1.PodFailed
	}
	var c phaseCounts
	for i := range pod.Spec.InitContainers {
		if isSidecar(&pod.Spec.InitContainers[i]) {
			c.addSidecar(findStatus(s.InitContainerStatuses, pod.Spec.InitContainers[i].Name))
		}
	}
	for i := range pod.Spec.Containers {
		c.add(findStatus(s.ContainerStatuses, pod.Spec.Containers[i].Name))
	}
	switch {
	case initPending > 0 || c.waiting > 0:
		return corev1.PodPending
	case c.running > 0 && c.unknown == 0:
		return corev1.PodRunning
	case c.running == 0 && c.stopped > 0 && c.unknown == 0:
		return stoppedPhase(pod, c, terminal)
	}
	return corev1.PodPending
}

func stoppedPhase(pod *corev1.Pod, c phaseCounts, terminal bool) corev1.PodPhase {
	if terminal {
		if c.stopped == c.succeeded {
			return corev1.PodSucceeded
		}
		return corev1.PodFailed
	}
	switch {
	case pod.Spec.RestartPolicy == corev1.RestartPolicyAlways:
		return corev1.PodRunning
	case c.stopped == c.succeeded:
		return corev1.PodSucceeded
	case pod.Spec.RestartPolicy == corev1.RestartPolicyNever:
		return corev1.PodFailed
	}
	return corev1.PodRunning
}

type phaseCounts struct {
	unknown, running, waiting, stopped, succeeded int
}

func (c *phaseCounts) add(st *corev1.ContainerStatus) {
	switch {
	case st == nil:
		c.unknown++
	case st.State.Running != nil:
		c.running++
	case st.State.Terminated != nil:
		c.stopped++
		if st.State.Terminated.ExitCode == 0 {
			c.succeeded++
		}
	case st.State.Waiting != nil && st.LastTerminationState.Terminated != nil:
		c.stopped++
	case st.State.Waiting != nil:
		c.waiting++
	default:
		c.unknown++
	}
}

// addSidecar counts a restartable init container: it keeps the pod running
// but never blocks completion.
func (c *phaseCounts) addSidecar(st *corev1.ContainerStatus) {
	switch {
	case st == nil:
		c.unknown++
	case st.State.Running != nil:
		c.running++
	case st.State.Waiting != nil && st.LastTerminationState.Terminated == nil:
		c.waiting++
	}
}

// initContainerCounts counts regular init containers that have not completed
// and those that failed.
func initContainerCounts(pod *corev1.Pod, s *corev1.PodStatus) (pending, failed int) {
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		if isSidecar(ic) {
			continue
		}
		st := findStatus(s.InitContainerStatuses, ic.Name)
		switch {
		case st == nil:
			pending++
		case st.State.Terminated != nil && st.State.Terminated.ExitCode == 0:
		case st.State.Terminated != nil:
			failed++
		case st.State.Waiting != nil && st.LastTerminationState.Terminated != nil &&
			st.LastTerminationState.Terminated.ExitCode != 0:
			failed++
		default:
			pending++
		}
	}
	return pending, failed
}

func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func findStatus(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}
