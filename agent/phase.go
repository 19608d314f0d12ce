package agent

import (
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// podPhase computes the pod phase from its container statuses, as the
// kubelet's getPhase does with sidecars GA and ContainerRestartRules (beta,
// on by default, in v1.37), where whether a stopped container is restarted
// is runtime.ContainerShouldRestart for its exit code (its
// restartPolicyRules, else its own restartPolicy, else the pod's):
//
//   - Failed when a regular init container failed and will not be
//     restarted;
//   - Pending while a regular init container has not succeeded, while a
//     sidecar has not started (unless the pod was initialized before, so a
//     restarting sidecar does not send it back), or while a container waits
//     for its first start;
//   - Running while a container (a sidecar included) runs;
//   - once nothing runs: Running while a regular container is to be
//     restarted, else Succeeded when every regular container exited 0 and
//     Failed when one did not; a terminal pod (its containers will not be
//     restarted) is Succeeded or Failed the same way. Sidecars never decide
//     completion.
//
// initialized tells whether a regular container of the current sandbox has
// started. terminal means the pod's containers will not be restarted; unlike
// the kubelet, nodekit gives static pods a terminal phase too.
func podPhase(pod *corev1.Pod, s *corev1.PodStatus, terminal, initialized bool) corev1.PodPhase {
	pendingInit, failedInit := regularInitCounts(pod, s)
	if failedInit > 0 {
		return corev1.PodFailed
	}
	var c phaseCounts
	for i := range pod.Spec.InitContainers {
		if noderuntime.IsSidecar(&pod.Spec.InitContainers[i]) {
			c.addSidecar(findStatus(s.InitContainerStatuses, pod.Spec.InitContainers[i].Name))
		}
	}
	for i := range pod.Spec.Containers {
		ctr := &pod.Spec.Containers[i]
		c.add(findStatus(s.ContainerStatuses, ctr.Name), func(code int32) bool {
			return noderuntime.ContainerShouldRestart(ctr, &pod.Spec, code)
		})
	}
	switch {
	case pendingInit > 0 || (c.pendingSidecars > 0 && !initialized) || c.waiting > 0:
		return corev1.PodPending
	case c.running > 0 && c.unknown == 0:
		return corev1.PodRunning
	case c.running == 0 && c.stopped > 0 && c.unknown == 0:
		return stoppedPhase(c, terminal)
	}
	return corev1.PodPending
}

// stoppedPhase is the phase of a pod none of whose containers runs.
func stoppedPhase(c phaseCounts, terminal bool) corev1.PodPhase {
	if !terminal && c.stopped != c.stoppedNotRestartable {
		return corev1.PodRunning // a container is being restarted
	}
	if c.stopped == c.succeeded {
		return corev1.PodSucceeded
	}
	return corev1.PodFailed
}

// phaseCounts counts the regular containers and sidecars by state.
type phaseCounts struct {
	unknown, running, waiting, stopped, succeeded int
	// stoppedNotRestartable are the stopped regular containers that will
	// not be restarted.
	stoppedNotRestartable int
	// pendingSidecars are sidecars that have not started yet.
	pendingSidecars int
}

// add counts a regular container; restarts tells whether it is restarted
// after exiting with a code.
func (c *phaseCounts) add(st *corev1.ContainerStatus, restarts func(exitCode int32) bool) {
	switch {
	case st == nil:
		c.unknown++
	case st.State.Running != nil:
		c.running++
	case st.State.Terminated != nil:
		c.stopped++
		if !restarts(st.State.Terminated.ExitCode) {
			c.stoppedNotRestartable++
		}
		if st.State.Terminated.ExitCode == 0 {
			c.succeeded++
		}
	case st.State.Waiting != nil && st.LastTerminationState.Terminated != nil:
		c.stopped++
		if !restarts(st.LastTerminationState.Terminated.ExitCode) {
			c.stoppedNotRestartable++
		}
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
// succeeded yet and those that failed and will not be restarted.
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
			if !noderuntime.ContainerShouldRestart(ic, &pod.Spec, st.State.Terminated.ExitCode) {
				failed++
			}
		case st.State.Waiting != nil && st.LastTerminationState.Terminated != nil:
			if code := st.LastTerminationState.Terminated.ExitCode; code != 0 && !noderuntime.ContainerShouldRestart(ic, &pod.Spec, code) {
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
