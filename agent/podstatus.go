package agent

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	nodeIP   string
	now      time.Time
}

// generateAPIPodStatus converts a runtime status into the pod's API status:
// container statuses, phase, conditions, addresses and start time. It is
// pure: the old status only supplies what must be kept (start time, restart
// history, transition times).
func generateAPIPodStatus(in statusInput) *corev1.PodStatus {
	old := in.old
	if old == nil {
		old = &in.pod.Status
	}
	s := &corev1.PodStatus{QOSClass: podQOS(in.pod)}
	setAddresses(s, in)
	s.StartTime = old.StartTime
	if s.StartTime == nil {
		t := metav1.NewTime(in.now)
		s.StartTime = &t
	}
	hasInit := len(in.pod.Spec.InitContainers) > 0
	s.InitContainerStatuses = convertContainerStatuses(in, in.pod.Spec.InitContainers, old.InitContainerStatuses, hasInit, true)
	s.ContainerStatuses = convertContainerStatuses(in, in.pod.Spec.Containers, old.ContainerStatuses, hasInit, false)
	s.Phase = podPhase(in.pod, s, in.terminal)
	if isTerminalPhase(old.Phase) && !isTerminalPhase(s.Phase) {
		s.Phase = old.Phase // a pod never leaves a terminal phase
	}
	if s.Phase == old.Phase {
		s.Reason, s.Message = old.Reason, old.Message
	}
	s.Conditions = podConditions(in, s, old)
	return s
}

func setAddresses(s *corev1.PodStatus, in statusInput) {
	if in.nodeIP != "" {
		s.HostIP = in.nodeIP
		s.HostIPs = []corev1.HostIP{{IP: in.nodeIP}}
	}
	ips := in.runtime.IPs
	if in.pod.Spec.HostNetwork && in.nodeIP != "" {
		ips = []string{in.nodeIP}
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

// convertContainerStatuses builds the API statuses of one list of containers
// (regular or init): the newest runtime container gives the state, the one
// before it the last state; a container that waits to be restarted shows the
// reason from the last sync.
func convertContainerStatuses(in statusInput, specs []corev1.Container, oldStatuses []corev1.ContainerStatus, hasInit, isInit bool) []corev1.ContainerStatus {
	if len(specs) == 0 {
		return nil
	}
	oldByName := map[string]*corev1.ContainerStatus{}
	for i := range oldStatuses {
		oldByName[oldStatuses[i].Name] = &oldStatuses[i]
	}
	out := make([]corev1.ContainerStatus, len(specs))
	for i := range specs {
		out[i] = containerStatus(in, &specs[i], oldByName[specs[i].Name], hasInit, isInit)
	}
	return out
}

func containerStatus(in statusInput, spec *corev1.Container, old *corev1.ContainerStatus, hasInit, isInit bool) corev1.ContainerStatus {
	st := defaultContainerStatus(spec, old, hasInit)
	seen := 0
	for _, cs := range in.runtime.ContainerStatuses {
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
	if isInit {
		if cs := in.runtime.FindContainerStatusByName(spec.Name); cs != nil && cs.State == noderuntime.ContainerStateExited && cs.ExitCode == 0 {
			return st
		}
	}
	if w, ok := in.waiting[spec.Name]; ok && noderuntime.ShouldContainerBeRestarted(spec, in.pod, in.runtime) {
		if st.State.Terminated != nil {
			st.LastTerminationState = st.State
		}
		st.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}}
		st.Ready = false
		st.Started = ptrTo(false)
	}
	return st
}

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

func fromRuntime(cs *noderuntime.ContainerStatus) corev1.ContainerStatus {
	id := cs.ID.String()
	st := corev1.ContainerStatus{
		Name: cs.Name, Image: cs.Image, ImageID: cs.ImageRef, ContainerID: id,
		RestartCount: int32(cs.RestartCount), Started: ptrTo(false),
	}
	if st.ImageID == "" {
		st.ImageID = cs.ImageID
	}
	switch cs.State {
	case noderuntime.ContainerStateRunning:
		st.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(cs.StartedAt)}
		st.Started = ptrTo(true)
		st.Ready = true // readiness probes are not built yet: a started container is ready
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
