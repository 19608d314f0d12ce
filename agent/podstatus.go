package agent

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodekit/nodekit/internal/qos"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Waiting reasons the agent reports, as the kubelet names them.
const (
	reasonContainerCreating = "ContainerCreating"
	reasonPodInitializing   = "PodInitializing"
)

// waitingReason is why a container that should run is not running, from the
// last SyncPod of its pod (the kubelet's reason cache).
type waitingReason struct {
	Reason, Message string
}

// statusInput is everything generateAPIPodStatus reads.
type statusInput struct {
	pod      *corev1.Pod
	runtime  *noderuntime.PodStatus
	old      *corev1.PodStatus
	waiting  map[string]waitingReason
	terminal bool
	// nodeIPs are the node's addresses, primary first; empty when unknown.
	nodeIPs []string
	now     time.Time
	// probe, when set, lets the prober set Started and Ready of the
	// container statuses before the conditions are computed from them.
	probe func(*corev1.PodStatus)
}

// generateAPIPodStatus converts a runtime status into the pod's API status:
// init, regular and ephemeral container statuses, phase, conditions,
// addresses and start time. It is pure: the old status only supplies what
// must be kept (start time, restart history, transition times).
func generateAPIPodStatus(in statusInput) *corev1.PodStatus {
	old := in.old
	if old == nil {
		old = &in.pod.Status
	}
	s := &corev1.PodStatus{QOSClass: qos.PodClass(in.pod)}
	setAddresses(s, in)
	s.StartTime = old.StartTime
	if s.StartTime == nil {
		t := metav1.NewTime(in.now)
		s.StartTime = &t
	}
	hasInit := len(in.pod.Spec.InitContainers) > 0
	s.InitContainerStatuses = convertContainerStatuses(in, in.pod.Spec.InitContainers, old.InitContainerStatuses, hasInit, kindInit)
	s.ContainerStatuses = convertContainerStatuses(in, in.pod.Spec.Containers, old.ContainerStatuses, hasInit, kindRegular)
	s.EphemeralContainerStatuses = convertContainerStatuses(in, ephemeralSpecs(in.pod), old.EphemeralContainerStatuses, hasInit, kindEphemeral)
	s.Phase = podPhase(in.pod, s, in.terminal, activeRegularContainerStarted(in.pod, in.runtime))
	if isTerminalPhase(old.Phase) && s.Phase != old.Phase {
		// A pod never leaves a terminal phase, not even for the other one:
		// an evicted pod (Failed) whose containers then exit 0 stays
		// Failed, as the kubelet's "illegal phase transition" guard.
		s.Phase = old.Phase
	}
	if s.Phase == old.Phase {
		s.Reason, s.Message = old.Reason, old.Message
	}
	if in.probe != nil {
		in.probe(s)
	}
	s.Conditions = podConditions(in, s, old)
	return s
}

func setAddresses(s *corev1.PodStatus, in statusInput) {
	for _, ip := range in.nodeIPs {
		s.HostIPs = append(s.HostIPs, corev1.HostIP{IP: ip})
	}
	if len(s.HostIPs) > 0 {
		s.HostIP = s.HostIPs[0].IP
	}
	ips := in.runtime.IPs
	if in.pod.Spec.HostNetwork && len(in.nodeIPs) > 0 {
		ips = in.nodeIPs // hostNetwork pods have the node's addresses
	}
	for _, ip := range ips {
		s.PodIPs = append(s.PodIPs, corev1.PodIP{IP: ip})
	}
	if len(s.PodIPs) > 0 {
		s.PodIP = s.PodIPs[0].IP
	}
}

func isTerminalPhase(p corev1.PodPhase) bool {
	return p == corev1.PodSucceeded || p == corev1.PodFailed
}

// containerKind is which list of the pod spec a container belongs to.
type containerKind int

const (
	kindRegular containerKind = iota
	kindInit
	kindEphemeral
)

// ephemeralSpecs views the pod's ephemeral containers as containers.
func ephemeralSpecs(pod *corev1.Pod) []corev1.Container {
	out := make([]corev1.Container, len(pod.Spec.EphemeralContainers))
	for i := range pod.Spec.EphemeralContainers {
		out[i] = corev1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
	}
	return out
}

// convertContainerStatuses builds the API statuses of one list of containers
// (regular, init or ephemeral), in spec order: the newest runtime container
// gives the state, the one before it the last state; a container that waits
// to be restarted shows the reason from the last sync.
func convertContainerStatuses(in statusInput, specs []corev1.Container, oldStatuses []corev1.ContainerStatus, hasInit bool, kind containerKind) []corev1.ContainerStatus {
	if len(specs) == 0 {
		return nil
	}
	oldByName := map[string]*corev1.ContainerStatus{}
	for i := range oldStatuses {
		oldByName[oldStatuses[i].Name] = &oldStatuses[i]
	}
	out := make([]corev1.ContainerStatus, len(specs))
	for i := range specs {
		out[i] = containerStatus(in, &specs[i], oldByName[specs[i].Name], hasInit, kind)
	}
	return out
}

// containerStatus is one container's API status.
func containerStatus(in statusInput, spec *corev1.Container, old *corev1.ContainerStatus, hasInit bool, kind containerKind) corev1.ContainerStatus {
	st, found := runtimeContainerStatus(in.runtime, spec, old, hasInit, in.pod.DeletionTimestamp != nil)
	st = setReadiness(st, spec, kind)
	if kind != kindRegular {
		if cs := in.runtime.FindContainerStatusByName(spec.Name); cs != nil && cs.State == noderuntime.ContainerStateExited && cs.ExitCode == 0 {
			return st // a completed init or ephemeral container stays completed
		}
	}
	if kind == kindInit && !found && !noderuntime.IsSidecar(spec) && st.State.Waiting != nil && regularContainerCreated(in.pod, in.runtime) {
		// Its instance is gone but the pod got past it: it completed.
		st.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed",
			Message: "Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally"}}
		st.Ready = true
		return st
	}
	if w, ok := in.waiting[spec.Name]; ok && noderuntime.ShouldContainerBeRestarted(spec, in.pod, in.runtime) {
		if st.State.Terminated != nil {
			st.LastTerminationState = st.State
		}
		st.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}}
		st.Ready = false
		if kind != kindEphemeral {
			st.Started = ptrTo(false)
		}
	}
	return st
}

// runtimeContainerStatus is the status from the runtime's two newest
// instances of the container, or, when the runtime has none (found false),
// the status the old one implies.
func runtimeContainerStatus(rs *noderuntime.PodStatus, spec *corev1.Container, old *corev1.ContainerStatus, hasInit, deleted bool) (corev1.ContainerStatus, bool) {
	st := defaultContainerStatus(spec, old, hasInit)
	seen := 0
	for _, cs := range rs.ContainerStatuses {
		if cs.Name != spec.Name {
			continue
		}
		if seen == 0 {
			current := fromRuntime(cs)
			current.LastTerminationState = st.LastTerminationState
			st = current
		} else {
			st.LastTerminationState = fromRuntime(cs).State
			break
		}
		seen++
	}
	if seen == 0 {
		return missingContainerStatus(st, old, deleted), false
	}
	return st, true
}

// setReadiness sets Ready and Started by kind, until probes decide them: a
// regular container and a sidecar are started and ready while they run; a
// regular init container is ready once it succeeded; an ephemeral container
// is never ready.
func setReadiness(st corev1.ContainerStatus, spec *corev1.Container, kind containerKind) corev1.ContainerStatus {
	running := st.State.Running != nil
	switch {
	case kind == kindEphemeral:
		st.Ready, st.Started = false, nil
	case kind == kindInit && !noderuntime.IsSidecar(spec):
		st.Ready = st.State.Terminated != nil && st.State.Terminated.ExitCode == 0
		st.Started = ptrTo(running)
	default:
		st.Ready = running // readiness probes are not built yet
		st.Started = ptrTo(running)
	}
	return st
}

// regularContainerCreated reports whether any regular container of the pod
// exists in the runtime: the pod got past its init containers.
func regularContainerCreated(pod *corev1.Pod, rs *noderuntime.PodStatus) bool {
	for i := range pod.Spec.Containers {
		if rs.FindContainerStatusByName(pod.Spec.Containers[i].Name) != nil {
			return true
		}
	}
	return false
}

// defaultContainerStatus is the status of a container before the runtime
// has it: waiting (PodInitializing while the pod has init containers), with
// the old status's restart count and last state.
func defaultContainerStatus(spec *corev1.Container, old *corev1.ContainerStatus, hasInit bool) corev1.ContainerStatus {
	reason := reasonContainerCreating
	if hasInit {
		reason = reasonPodInitializing
	}
	st := corev1.ContainerStatus{
		Name: spec.Name, Image: spec.Image, Started: ptrTo(false),
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}},
	}
	if old != nil {
		st.RestartCount = old.RestartCount
		st.LastTerminationState = old.LastTerminationState
	}
	return st
}

// missingContainerStatus is the status of a container that the runtime no
// longer has, as the kubelet shows it: a terminated old status is kept; a
// container that was running gets a last state saying it vanished, so that
// the pod does not fall back to Pending, and counts as restarted unless the
// pod is being deleted.
func missingContainerStatus(st corev1.ContainerStatus, old *corev1.ContainerStatus, deleted bool) corev1.ContainerStatus {
	switch {
	case old == nil:
		return st
	case old.State.Terminated != nil:
		return *old.DeepCopy()
	case old.State.Running != nil && st.LastTerminationState.Terminated == nil:
		st.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
			Reason: "ContainerStatusUnknown", ExitCode: 137,
			Message: "The container could not be located when the pod was deleted.  The container used to be Running",
		}
		if !deleted {
			st.RestartCount++
		}
	}
	return st
}

func fromRuntime(cs *noderuntime.ContainerStatus) corev1.ContainerStatus {
	id := cs.ID.String()
	st := corev1.ContainerStatus{
		Name: cs.Name, Image: cs.Image, ImageID: cs.ImageRef, ContainerID: id,
		RestartCount: int32(cs.RestartCount),
	}
	if st.ImageID == "" {
		st.ImageID = cs.ImageID
	}
	switch cs.State {
	case noderuntime.ContainerStateRunning:
		st.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(cs.StartedAt)}
	case noderuntime.ContainerStateExited:
		st.State.Terminated = &corev1.ContainerStateTerminated{
			ExitCode: int32(cs.ExitCode), Reason: cs.Reason, Message: cs.Message,
			StartedAt: metav1.NewTime(cs.StartedAt), FinishedAt: metav1.NewTime(cs.FinishedAt),
			ContainerID: id,
		}
	default:
		st.State.Waiting = &corev1.ContainerStateWaiting{}
	}
	return st
}

func ptrTo[T any](v T) *T { return &v }
