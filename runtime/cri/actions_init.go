package cri

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// computeInitContainerActions advances a pod's init containers, as the
// kubelet does with sidecars GA, and reports whether the pod is initialized:
// every regular init container succeeded and every sidecar started.
//
//   - Init containers run one at a time in spec order: the next one starts
//     only when the one before it succeeded or, for a sidecar, runs and has
//     started (its startup probe succeeded).
//   - A failed regular init container is started again, unless its restart
//     policy says otherwise (runtime.ContainerShouldRestart: its
//     restartPolicyRules for the exit code, its own restartPolicy, else the
//     pod's): then the pod is killed and fails.
//   - A sidecar that exited is started again (CrashLoopBackOff applies), also
//     after initialization; one whose spec changed, whose startup or
//     liveness probe failed or whose state is unknown is killed and started
//     again.
//   - Once a regular container was created or runs, the pod counts as
//     initialized even if its init containers were removed since: only
//     sidecars are kept running then.
//
// The containers are walked from the last to the first, because completed
// init containers may have been removed from the runtime: the last one with
// a status tells how far initialization got.
func computeInitContainerActions(pod *corev1.Pod, status *noderuntime.PodStatus, probes probeResults, a *podActions) bool {
	inits := pod.Spec.InitContainers
	if len(inits) == 0 {
		return true
	}
	initialized := regularContainerCreatedOrRunning(pod, status)
	// laterStarted is true once an init container after the current one (or
	// a regular container) has a status: the current one is then done.
	laterStarted := initialized
	for i := len(inits) - 1; i >= 0; i-- {
		c := &inits[i]
		sidecar := noderuntime.IsSidecar(c)
		cs := status.FindContainerStatusByName(c.Name)
		if cs == nil {
			// A sidecar that ran once but whose status is gone is started again.
			if laterStarted && sidecar {
				a.InitContainersToStart = append(a.InitContainersToStart, i)
			}
			continue
		}
		if laterStarted && !sidecar {
			continue // a completed init container: nothing more to do
		}
		step := initStep{c: c, cs: cs, i: i, last: i == len(inits)-1, laterStarted: laterStarted,
			restartFailed: noderuntime.ShouldContainerBeRestarted(c, pod, status), restartUnknown: restartsAfterKill(pod, c)}
		done, fail := initContainerActions(step, probes, a)
		if fail {
			a.KillPod = true
			a.InitContainersToStart = nil
			return false
		}
		initialized = initialized || done
		laterStarted = true
	}
	if !laterStarted {
		a.InitContainersToStart = append(a.InitContainersToStart, 0)
	}
	slices.Reverse(a.InitContainersToStart)
	return initialized
}

// initStep is one init container with a status, as the walk sees it.
type initStep struct {
	c  *corev1.Container
	cs *noderuntime.ContainerStatus
	i  int
	// last is whether it is the last init container; laterStarted whether
	// one after it has a status.
	last, laterStarted bool
	// restartFailed tells whether it is restarted after it failed: its
	// restartPolicyRules for its exit code, else its own restartPolicy,
	// else the pod's, decide (runtime.ContainerShouldRestart).
	// restartUnknown tells whether it is restarted from the unknown state,
	// which has no exit code: its own restartPolicy, else the pod's, is
	// not Never.
	restartFailed, restartUnknown bool
}

// initContainerActions decides one init container that has a status: done
// reports that it completes initialization (the last one succeeded or, as a
// sidecar, started), fail that the pod failed and must be killed.
func initContainerActions(s initStep, probes probeResults, a *podActions) (done, fail bool) {
	sidecar := noderuntime.IsSidecar(s.c)
	switch s.cs.State {
	case noderuntime.ContainerStateCreated:
		// Created but never started: the start failed; start it again.
		a.InitContainersToStart = append(a.InitContainersToStart, s.i)
	case noderuntime.ContainerStateRunning:
		if sidecar {
			return runningSidecarActions(s.c, s.cs, s.i, s.last, s.laterStarted, probes, a) && s.last, false
		}
	case noderuntime.ContainerStateExited:
		switch {
		case sidecar:
			a.InitContainersToStart = append(a.InitContainersToStart, s.i)
		case initContainerFailed(s.cs):
			if !s.restartFailed {
				return false, true
			}
			a.InitContainersToStart = append(a.InitContainersToStart, s.i)
		case s.last:
			return true, false
		default:
			a.InitContainersToStart = append(a.InitContainersToStart, s.i+1)
		}
	default:
		if !sidecar && !s.restartUnknown {
			return false, true
		}
		a.ContainersToKill[s.cs.ID] = containerToKill{Name: s.c.Name, Reason: killReasonUnknown,
			Message: fmt.Sprintf("Init container is in %q state, try killing it before restart", s.cs.State)}
		a.InitContainersToStart = append(a.InitContainersToStart, s.i)
	}
	return false, false
}

// runningSidecarActions handles a running sidecar at index i (last when it
// is the last init container) and reports whether it has started. A started
// sidecar lets the next init container start (the first time) and is
// restarted when its spec changed or its liveness probe failed; a failed
// startup probe restarts it; a pending one holds initialization back.
func runningSidecarActions(c *corev1.Container, cs *noderuntime.ContainerStatus, i int, last, laterStarted bool,
	probes probeResults, a *podActions) bool {
	switch probes.startupResult(c, cs) {
	case noderuntime.StartupSucceeded:
	case noderuntime.StartupFailed:
		a.ContainersToKill[cs.ID] = containerToKill{Name: c.Name, Reason: killReasonStartupProbe,
			Message: fmt.Sprintf("Init container %s failed startup probe, will be restarted", c.Name)}
		a.InitContainersToStart = append(a.InitContainersToStart, i)
		return false
	default:
		return false
	}
	if !laterStarted && !last {
		a.InitContainersToStart = append(a.InitContainersToStart, i+1)
	}
	switch {
	case cs.Hash != hashContainer(c):
		a.ContainersToKill[cs.ID] = containerToKill{Name: c.Name, Reason: killReasonSpecChanged,
			Message: fmt.Sprintf("Init container %s definition changed (spec hash changed), will be restarted", c.Name)}
		a.InitContainersToStart = append(a.InitContainersToStart, i)
	case probes.livenessFailed(c, cs):
		a.ContainersToKill[cs.ID] = containerToKill{Name: c.Name, Reason: killReasonLivenessProbe,
			Message: fmt.Sprintf("Init container %s failed liveness probe, will be restarted", c.Name)}
		a.InitContainersToStart = append(a.InitContainersToStart, i)
	}
	return true
}

// initContainerFailed reports whether an init container failed: it exited
// with a non-zero code, was OOM-killed, or its state is unknown.
func initContainerFailed(cs *noderuntime.ContainerStatus) bool {
	switch {
	case strings.Contains(cs.Reason, "OOMKilled"):
		return true
	case cs.State == noderuntime.ContainerStateExited && cs.ExitCode != 0:
		return true
	}
	return cs.State == noderuntime.ContainerStateUnknown
}

// regularContainerCreatedOrRunning reports whether a regular container of
// the pod is created or running, or exited in the current sandbox: the pod
// was initialized before, even if its init containers are gone from the
// runtime. A regular container that exited in an older sandbox does not
// count (the kubelet counts no exited container at all, and so restarts the
// sidecars of a finished pod once before it kills them).
func regularContainerCreatedOrRunning(pod *corev1.Pod, status *noderuntime.PodStatus) bool {
	current := ""
	if len(status.SandboxStatuses) > 0 {
		current = status.SandboxStatuses[0].GetId()
	}
	for i := range pod.Spec.Containers {
		cs := status.FindContainerStatusByName(pod.Spec.Containers[i].Name)
		switch {
		case cs == nil:
		case cs.State == noderuntime.ContainerStateCreated, cs.State == noderuntime.ContainerStateRunning:
			return true
		case cs.State == noderuntime.ContainerStateExited && current != "" && cs.SandboxID == current:
			return true
		}
	}
	return false
}

// ephemeralContainersToStart lists the ephemeral containers that never ran:
// they start once and are never restarted, even before initialization ends.
func ephemeralContainersToStart(pod *corev1.Pod, status *noderuntime.PodStatus) []int {
	var out []int
	for i := range pod.Spec.EphemeralContainers {
		if status.FindContainerStatusByName(pod.Spec.EphemeralContainers[i].Name) == nil {
			out = append(out, i)
		}
	}
	return out
}

// ephemeralAsContainer views an ephemeral container as a container: the two
// share their fields.
func ephemeralAsContainer(ec *corev1.EphemeralContainer) *corev1.Container {
	return (*corev1.Container)(&ec.EphemeralContainerCommon)
}
