package cri

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// podActions is what one SyncPod must do to bring a pod's runtime state to its
// spec. computePodActions decides it; SyncPod carries it out in the
// kubelet's order: kill, create the sandbox, start ephemeral containers,
// init containers, then regular containers.
type podActions struct {
	// KillPod stops every container and sandbox of the pod first.
	KillPod bool
	// CreateSandbox creates a new sandbox with Attempt, after KillPod.
	CreateSandbox bool
	// SandboxID is the existing sandbox that containers start in when no new
	// sandbox is created.
	SandboxID string
	// Attempt is the sandbox attempt number (one more than the highest seen
	// when a sandbox is recreated).
	Attempt uint32
	// EphemeralContainersToStart are indexes into pod.Spec.EphemeralContainers.
	EphemeralContainersToStart []int
	// InitContainersToStart are indexes into pod.Spec.InitContainers, in spec
	// order: at most one regular init container (the next one), and the
	// sidecars to start or restart.
	InitContainersToStart []int
	// ContainersToStart are indexes into pod.Spec.Containers.
	ContainersToStart []int
	// ContainersToKill maps a container ID to why it is killed.
	ContainersToKill map[noderuntime.ContainerID]containerToKill
}

// containerToKill explains why a running container must be stopped.
type containerToKill struct {
	// Name is the container's name in the spec.
	Name string
	// Reason is a short machine-readable cause ("SpecChanged", "Unknown").
	Reason string
	// Message is the human-readable explanation.
	Message string
}

// Kill reasons.
const (
	killReasonSpecChanged   = "SpecChanged"
	killReasonUnknown       = "Unknown"
	killReasonStartupProbe  = "StartupProbe"
	killReasonLivenessProbe = "LivenessProbe"
)

// String formats the actions for logs.
func (a podActions) String() string {
	ids := make([]string, 0, len(a.ContainersToKill))
	for id, k := range a.ContainersToKill {
		ids = append(ids, k.Name+"="+id.ID)
	}
	sort.Strings(ids)
	return fmt.Sprintf("KillPod: %t, CreateSandbox: %t, SandboxID: %q, Attempt: %d, EphemeralContainersToStart: %v, "+
		"InitContainersToStart: %v, ContainersToStart: %v, ContainersToKill: [%s]",
		a.KillPod, a.CreateSandbox, a.SandboxID, a.Attempt, a.EphemeralContainersToStart,
		a.InitContainersToStart, a.ContainersToStart, strings.Join(ids, " "))
}

// probeResults is what computePodActions learns from the probes about a
// running container.
type probeResults interface {
	// startupResult tells whether the container has started: whether its
	// startup probe (if any) has succeeded.
	startupResult(c *corev1.Container, cs *noderuntime.ContainerStatus) noderuntime.StartupResult
	// livenessFailed tells whether its liveness probe failed for good.
	livenessFailed(c *corev1.Container, cs *noderuntime.ContainerStatus) bool
}

// startupFunc is a probeResults with startup results only: whether a
// running container has started. A nil startupFunc means runningIsStarted.
type startupFunc func(c *corev1.Container, cs *noderuntime.ContainerStatus) noderuntime.StartupResult

func (f startupFunc) startupResult(c *corev1.Container, cs *noderuntime.ContainerStatus) noderuntime.StartupResult {
	if f == nil {
		return noderuntime.StartupSucceeded
	}
	return f(c, cs)
}

func (startupFunc) livenessFailed(*corev1.Container, *noderuntime.ContainerStatus) bool { return false }

// runningIsStarted is the startupFunc without a prober: a running container
// has started.
func runningIsStarted(*corev1.Container, *noderuntime.ContainerStatus) noderuntime.StartupResult {
	return noderuntime.StartupSucceeded
}

// computePodActions compares pod's spec with its runtime status and returns
// the actions that reconcile them. It is pure: no I/O, no clock; probes
// (nil means no prober: running means started, nothing fails) is asked
// whether a running container started and whether its liveness failed.
//
// A changed sandbox (none, none ready, several ready, a different network
// namespace mode, no IP) means killing the pod and creating a new sandbox,
// which starts from the first init container, or from every container the
// restart policy allows when there is none. Otherwise ephemeral containers
// that never ran are started, then the init containers are advanced
// (computeInitContainerActions); only once they are done is each regular
// container that is missing or dead started when the restart policy allows
// it, and each running one whose spec hash changed, whose liveness probe
// failed or whose startup probe failed killed (and started again unless the
// restart policy is Never; a changed spec restarts it whatever the policy).
// When no regular container runs or should start, the pod is killed, its
// sidecars included.
func computePodActions(pod *corev1.Pod, status *noderuntime.PodStatus, probes probeResults) podActions {
	if status == nil {
		status = &noderuntime.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	}
	if probes == nil {
		probes = startupFunc(runningIsStarted)
	}
	changed, attempt, sandboxID := sandboxChanged(pod, status)
	a := podActions{
		KillPod:           changed,
		CreateSandbox:     changed,
		SandboxID:         sandboxID,
		Attempt:           attempt,
		ContainersToStart: []int{},
		ContainersToKill:  map[noderuntime.ContainerID]containerToKill{},
	}
	if changed {
		computeSandboxRecreate(pod, status, &a)
		return a
	}
	a.EphemeralContainersToStart = ephemeralContainersToStart(pod, status)
	initialized := computeInitContainerActions(pod, status, probes, &a)
	if a.KillPod {
		a.EphemeralContainersToStart = nil
		return a
	}
	if !initialized {
		return a
	}
	if computeContainerActions(pod, status, probes, &a) == 0 && len(a.ContainersToStart) == 0 {
		// Nothing regular runs or will: the pod is done, and its sidecars
		// must not keep it alive.
		a.KillPod = true
		a.InitContainersToStart = nil
		a.EphemeralContainersToStart = nil
	}
	return a
}

// computeContainerActions decides the regular containers of an initialized
// pod and returns how many keep running.
func computeContainerActions(pod *corev1.Pod, status *noderuntime.PodStatus, probes probeResults, a *podActions) int {
	keep := 0
	for idx := range pod.Spec.Containers {
		c := &pod.Spec.Containers[idx]
		cs := status.FindContainerStatusByName(c.Name)
		if cs == nil || cs.State != noderuntime.ContainerStateRunning {
			if !noderuntime.ShouldContainerBeRestarted(c, pod, status) {
				continue
			}
			a.ContainersToStart = append(a.ContainersToStart, idx)
			if cs != nil && cs.State == noderuntime.ContainerStateUnknown {
				a.ContainersToKill[cs.ID] = containerToKill{
					Name: c.Name, Reason: killReasonUnknown,
					Message: fmt.Sprintf("Container is in %q state, try killing it before restart", cs.State),
				}
			}
			continue
		}
		kill, ok := runningContainerKill(c, cs, probes)
		if !ok {
			keep++
			continue
		}
		// A changed spec restarts the container whatever the restart
		// policy; a failed probe only when its restart policy (its own,
		// else the pod's) is not Never. Its restartPolicyRules are not
		// asked: it was killed, it did not exit with a code of its own.
		if kill.Reason == killReasonSpecChanged || restartsAfterKill(pod, c) {
			kill.Message += ", will be restarted"
			a.ContainersToStart = append(a.ContainersToStart, idx)
		}
		a.ContainersToKill[cs.ID] = kill
	}
	return keep
}

// restartsAfterKill reports whether a container killed for a failed probe
// is started again: its own restartPolicy is not Never, or, without one,
// the pod's is not.
func restartsAfterKill(pod *corev1.Pod, c *corev1.Container) bool {
	if c.RestartPolicy != nil {
		return *c.RestartPolicy != corev1.ContainerRestartPolicyNever
	}
	return pod.Spec.RestartPolicy != corev1.RestartPolicyNever
}

// runningContainerKill reports why a running regular container must be
// killed, if it must: its spec changed, its liveness probe failed, or its
// startup probe failed.
func runningContainerKill(c *corev1.Container, cs *noderuntime.ContainerStatus, probes probeResults) (containerToKill, bool) {
	switch {
	case cs.Hash != hashContainer(c):
		return containerToKill{Name: c.Name, Reason: killReasonSpecChanged,
			Message: fmt.Sprintf("Container %s definition changed (spec hash changed)", c.Name)}, true
	case probes.livenessFailed(c, cs):
		return containerToKill{Name: c.Name, Reason: killReasonLivenessProbe,
			Message: fmt.Sprintf("Container %s failed liveness probe", c.Name)}, true
	case probes.startupResult(c, cs) == noderuntime.StartupFailed:
		return containerToKill{Name: c.Name, Reason: killReasonStartupProbe,
			Message: fmt.Sprintf("Container %s failed startup probe", c.Name)}, true
	}
	return containerToKill{}, false
}

// computeSandboxRecreate fills the actions for a pod whose sandbox must be
// (re)created: the first init container or the containers that start in the
// new sandbox, or no new sandbox at all when the pod is done.
func computeSandboxRecreate(pod *corev1.Pod, status *noderuntime.PodStatus, a *podActions) {
	// Under Never, a pod whose containers already ran gets no new sandbox;
	// the old one is only killed. With no container status at all the
	// sandbox never got as far as a container, so creating it is retried.
	if pod.Spec.RestartPolicy == corev1.RestartPolicyNever && a.Attempt != 0 && len(status.ContainerStatuses) != 0 {
		a.CreateSandbox = false
		return
	}
	var toStart []int
	for idx := range pod.Spec.Containers {
		c := &pod.Spec.Containers[idx]
		// A container that succeeded under OnFailure (its own policy, else
		// the pod's) is not run again.
		runOnce := pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure
		if c.RestartPolicy != nil {
			runOnce = *c.RestartPolicy == corev1.ContainerRestartPolicyOnFailure
		}
		if runOnce && containerSucceeded(c, status) {
			continue
		}
		toStart = append(toStart, idx)
	}
	// A pod that got as far as its regular containers and has none left to
	// run is done: no new sandbox.
	if len(toStart) == 0 && anyRegularContainerCreated(pod, status) {
		a.CreateSandbox = false
		return
	}
	// A new sandbox runs the init containers again, from the first.
	if len(pod.Spec.InitContainers) > 0 {
		a.InitContainersToStart = []int{0}
		return
	}
	if toStart != nil {
		a.ContainersToStart = toStart
	}
}

// sandboxChanged reports whether the pod needs a new sandbox, with the
// attempt number for it and the ID of the current (newest) sandbox.
func sandboxChanged(pod *corev1.Pod, status *noderuntime.PodStatus) (bool, uint32, string) {
	if len(status.SandboxStatuses) == 0 {
		return true, 0, ""
	}
	ready := 0
	maxAttempt := uint32(0)
	for _, s := range status.SandboxStatuses {
		if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			ready++
		}
		maxAttempt = max(maxAttempt, s.GetMetadata().GetAttempt())
	}
	newest := status.SandboxStatuses[0]
	switch {
	case ready > 1:
		return true, maxAttempt + 1, newest.GetId()
	case newest.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY:
		return true, maxAttempt + 1, newest.GetId()
	case newest.GetLinux().GetNamespaces().GetOptions().GetNetwork() != networkMode(pod):
		return true, maxAttempt + 1, ""
	case !pod.Spec.HostNetwork && newest.GetNetwork() != nil && newest.GetNetwork().GetIp() == "":
		return true, maxAttempt + 1, newest.GetId()
	}
	return false, maxAttempt, newest.GetId()
}

// containerSucceeded reports whether the newest instance of c exited with 0.
func containerSucceeded(c *corev1.Container, status *noderuntime.PodStatus) bool {
	cs := status.FindContainerStatusByName(c.Name)
	return cs != nil && cs.State == noderuntime.ContainerStateExited && cs.ExitCode == 0
}

// anyRegularContainerCreated reports whether any regular container of the
// pod was ever created (and so the pod got past its init containers).
func anyRegularContainerCreated(pod *corev1.Pod, status *noderuntime.PodStatus) bool {
	for i := range pod.Spec.Containers {
		cs := status.FindContainerStatusByName(pod.Spec.Containers[i].Name)
		if cs == nil {
			continue
		}
		switch cs.State {
		case noderuntime.ContainerStateCreated, noderuntime.ContainerStateRunning, noderuntime.ContainerStateExited:
			return true
		}
	}
	return false
}

// networkMode is the sandbox network namespace mode the pod asks for.
func networkMode(pod *corev1.Pod) runtimeapi.NamespaceMode {
	if pod.Spec.HostNetwork {
		return runtimeapi.NamespaceMode_NODE
	}
	return runtimeapi.NamespaceMode_POD
}

// pidMode is the PID namespace mode: the node's, the pod's when processes
// are shared, otherwise each container's own.
func pidMode(pod *corev1.Pod) runtimeapi.NamespaceMode {
	switch {
	case pod.Spec.HostPID:
		return runtimeapi.NamespaceMode_NODE
	case pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace:
		return runtimeapi.NamespaceMode_POD
	}
	return runtimeapi.NamespaceMode_CONTAINER
}

// ipcMode is the IPC namespace mode: the node's or the pod's.
func ipcMode(pod *corev1.Pod) runtimeapi.NamespaceMode {
	if pod.Spec.HostIPC {
		return runtimeapi.NamespaceMode_NODE
	}
	return runtimeapi.NamespaceMode_POD
}

// namespaceOptions are the pod's namespace modes, for sandbox and containers.
func namespaceOptions(pod *corev1.Pod) *runtimeapi.NamespaceOption {
	return &runtimeapi.NamespaceOption{Network: networkMode(pod), Pid: pidMode(pod), Ipc: ipcMode(pod)}
}
