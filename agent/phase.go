package agent

import (
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// podPhase computes the pod phase from its container statuses, as the
// kubelet's getPhase does with sidecars GA:
//
//   - Failed when a regular init container failed under restartPolicy Never;
//   - Pending while a regular init container has not succeeded, while a
//     sidecar has not started (unless the pod was initialized before, so a
//     restarting sidecar does not send it back), or while a container waits
//     for its first start;
//   - Running while a container (a sidecar included) runs;
//   - once nothing runs: Succeeded when every regular container exited 0,
//     Failed when one failed and the pod will not restart it (restartPolicy
//     Never, or terminal), else Running. Sidecars never decide completion.
//
// initialized tells whether a regular container of the current sandbox has
// started. terminal means the pod's containers will not be restarted; unlike
// the kubelet, nodekit gives static pods a terminal phase too.
func podPhase(pod *corev1.Pod, s *corev1.PodStatus, terminal, initialized bool) corev1.PodPhase {
	pendingInit, failedInit := regularInitCounts(pod, s)
	if failedInit > 0 && pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
		return corev1.PodFailed
	}
	var c phaseCounts
	for i := range pod.Spec.InitContainers {
		if noderuntime.IsSidecar(&pod.Spec.InitContainers[i]) {
			c.addSidecar(findStatus(s.InitContainerStatuses, pod.Spec.InitContainers[i].Name))
		}
	}
	for i := range pod.Spec.Containers {
		c.add(findStatus(s.ContainerStatuses, pod.Spec.Containers[i].Name))
	}
	switch {
	case pendingInit > 0 || (c.pendingSidecars > 0 && !initialized) || c.waiting > 0:
		return corev1.PodPending
	case c.running > 0 && c.unknown == 0:
		return corev1.PodRunning
	case c.running == 0 && c.stopped > 0 && c.unknown == 0:
		return stoppedPhase(pod, c, terminal)
	}
	return corev1.PodPending
}

// stoppedPhase is the phase of a pod none of whose containers runs.
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

// phaseCounts counts the regular containers and sidecars by state.
type phaseCounts struct {
	unknown, running, waiting, stopped, succeeded int
	// pendingSidecars are sidecars that have not started yet.
	pendingSidecars int
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

// addSidecar counts a sidecar: a running one keeps the pod running, one that
// never started keeps it pending, and a stopped one counts for nothing.
func (c *phaseCounts) addSidecar(st *corev1.ContainerStatus) {
	switch {
	case st == nil:
		c.unknown++
	case st.State.Running != nil:
		if st.Started == nil || !*st.Started {
			c.pendingSidecars++
		}
		c.running++
	case st.State.Terminated != nil:
	case st.State.Waiting != nil && st.LastTerminationState.Terminated != nil:
	case st.State.Waiting != nil:
		c.pendingSidecars++
		c.waiting++
	default:
		c.pendingSidecars++
		c.unknown++
	}
}

// regularInitCounts counts the regular init containers that have not
// succeeded yet and those that failed.
func regularInitCounts(pod *corev1.Pod, s *corev1.PodStatus) (pending, failed int) {
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		if noderuntime.IsSidecar(ic) {
			continue
		}
		st := findStatus(s.InitContainerStatuses, ic.Name)
		switch {
		case st == nil:
			pending++
		case st.State.Terminated != nil && st.State.Terminated.ExitCode == 0:
		case st.State.Terminated != nil:
			failed++
		case st.State.Waiting != nil && st.LastTerminationState.Terminated != nil:
			if st.LastTerminationState.Terminated.ExitCode != 0 {
				failed++
			}
		default:
			pending++
		}
	}
	return pending, failed
}

// activeRegularContainerStarted reports whether a regular container of the
// pod's current (newest, ready) sandbox exists: the pod was initialized in
// that sandbox. Containers of a sandbox being replaced do not count.
func activeRegularContainerStarted(pod *corev1.Pod, rs *noderuntime.PodStatus) bool {
	if rs == nil || len(rs.SandboxStatuses) == 0 {
		return false
	}
	active := rs.SandboxStatuses[0]
	if active.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY {
		return false
	}
	for _, cs := range rs.ContainerStatuses {
		if cs.SandboxID == active.GetId() && isRegular(pod, cs.Name) {
			return true
		}
	}
	return false
}

func isRegular(pod *corev1.Pod, name string) bool {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return true
		}
	}
	return false
}

func findStatus(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}
