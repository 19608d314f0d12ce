package agent

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Condition reasons, as the kubelet names them.
const (
	reasonContainersNotReady       = "ContainersNotReady"
	reasonContainersNotInitialized = "ContainersNotInitialized"
	reasonPodCompleted             = "PodCompleted"
	reasonPodFailed                = "PodFailed"
)

// podConditions builds the conditions the agent owns (PodReadyToStartContainers,
// Initialized, Ready, ContainersReady, PodScheduled), keeping the others from
// the old status and each condition's transition time while it holds.
func podConditions(in statusInput, s, old *corev1.PodStatus) []corev1.PodCondition {
	var out []corev1.PodCondition
	for _, c := range in.pod.Status.Conditions {
		if !ownedCondition(c.Type) {
			out = append(out, c)
		}
	}
	ready := containersReadyCondition(in.pod, s)
	podReady := podReadyCondition(in.pod, ready, out)
	owned := []corev1.PodCondition{
		sandboxReadyCondition(in),
		initializedCondition(in.pod, s),
		podReady,
		ready,
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
	}
	now := metav1.NewTime(in.now)
	for _, c := range owned {
		c.LastTransitionTime = now
		if prev := findCondition(old.Conditions, c.Type); prev != nil && prev.Status == c.Status {
			c.LastTransitionTime = prev.LastTransitionTime
		}
		out = append(out, c)
	}
	return out
}

// reasonReadinessGatesNotReady is the Ready condition's reason when the
// containers are ready but a readiness gate is not.
const reasonReadinessGatesNotReady = "ReadinessGatesNotReady"

// podReadyCondition is Ready, as the kubelet computes it: ContainersReady
// (same status, reason and message) while the containers are not ready;
// then True only if every readiness gate's condition, among conds (the
// conditions others set in the pod's API status), exists and is True, and
// otherwise False with reason ReadinessGatesNotReady naming each gate.
func podReadyCondition(pod *corev1.Pod, containersReady corev1.PodCondition, conds []corev1.PodCondition) corev1.PodCondition {
	ready := containersReady
	ready.Type = corev1.PodReady
	if ready.Status != corev1.ConditionTrue {
		return ready
	}
	var unready []string
	for _, gate := range pod.Spec.ReadinessGates {
		switch c := findCondition(conds, gate.ConditionType); {
		case c == nil:
			unready = append(unready, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", gate.ConditionType))
		case c.Status != corev1.ConditionTrue:
			unready = append(unready, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", gate.ConditionType, c.Status))
		}
	}
	if len(unready) > 0 {
		return corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse,
			Reason: reasonReadinessGatesNotReady, Message: strings.Join(unready, ", ")}
	}
	return ready
}

// readinessNeedsSync reports whether a pod with readiness gates, as the API
// server now has it, shows a Ready condition other than its gates and its
// ContainersReady condition imply: someone changed a gate's condition, and
// the pod must be synced so that Ready follows (the kubelet's
// NeedToReconcilePodReadiness).
func readinessNeedsSync(pod *corev1.Pod) bool {
	if len(pod.Spec.ReadinessGates) == 0 {
		return false
	}
	containersReady := findCondition(pod.Status.Conditions, corev1.ContainersReady)
	ready := findCondition(pod.Status.Conditions, corev1.PodReady)
	if containersReady == nil || ready == nil {
		return false
	}
	return podReadyCondition(pod, *containersReady, pod.Status.Conditions).Status != ready.Status
}

func ownedCondition(t corev1.PodConditionType) bool {
	switch t {
	case corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady,
		corev1.ContainersReady, corev1.PodScheduled:
		return true
	}
	return false
}

// containersReadyCondition is ContainersReady, as the kubelet computes it:
// True when every sidecar and regular container is ready; False with the
// unknown and unready ones named, or with reason PodCompleted or PodFailed
// once the pod is terminal.
func containersReadyCondition(pod *corev1.Pod, s *corev1.PodStatus) corev1.PodCondition {
	cond := corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse}
	var unknown, unready []string
	check := func(statuses []corev1.ContainerStatus, name string) {
		switch st := findStatus(statuses, name); {
		case st == nil:
			unknown = append(unknown, name)
		case !st.Ready:
			unready = append(unready, name)
		}
	}
	for i := range pod.Spec.InitContainers {
		if noderuntime.IsSidecar(&pod.Spec.InitContainers[i]) {
			check(s.InitContainerStatuses, pod.Spec.InitContainers[i].Name)
		}
	}
	for i := range pod.Spec.Containers {
		check(s.ContainerStatuses, pod.Spec.Containers[i].Name)
	}
	switch {
	case s.Phase == corev1.PodSucceeded && len(unknown) == 0:
		cond.Reason = reasonPodCompleted
		return cond
	case s.Phase == corev1.PodFailed:
		cond.Reason = reasonPodFailed
		return cond
	}
	msg := notReadyMessage(unknown, "unknown", unready, "unready")
	if msg == "" {
		cond.Status = corev1.ConditionTrue
		return cond
	}
	cond.Reason, cond.Message = reasonContainersNotReady, msg
	return cond
}

// notReadyMessage names the containers of two lists, as the kubelet words it
// ("containers with unready status: [a b]").
func notReadyMessage(first []string, firstWhat string, second []string, secondWhat string) string {
	var parts []string
	if len(first) > 0 {
		parts = append(parts, fmt.Sprintf("containers with %s status: %s", firstWhat, first))
	}
	if len(second) > 0 {
		parts = append(parts, fmt.Sprintf("containers with %s status: %s", secondWhat, second))
	}
	return strings.Join(parts, ", ")
}

// initializedCondition is Initialized, as the kubelet computes it: True once
// every regular init container succeeded and every sidecar started, once a
// regular container has started (the pod was initialized before; a
// restarting sidecar does not undo it), and for a Succeeded pod.
func initializedCondition(pod *corev1.Pod, s *corev1.PodStatus) corev1.PodCondition {
	cond := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	var unknown, incomplete []string
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		st := findStatus(s.InitContainerStatuses, ic.Name)
		switch {
		case st == nil:
			unknown = append(unknown, ic.Name)
		case noderuntime.IsSidecar(ic) && (st.Started == nil || !*st.Started):
			incomplete = append(incomplete, ic.Name)
		case !noderuntime.IsSidecar(ic) && !st.Ready:
			incomplete = append(incomplete, ic.Name)
		}
	}
	if s.Phase == corev1.PodSucceeded && len(unknown) == 0 {
		cond.Reason = reasonPodCompleted
		return cond
	}
	if anyRegularStarted(pod, s.ContainerStatuses) {
		return cond
	}
	if msg := notReadyMessage(unknown, "unknown", incomplete, "incomplete"); msg != "" {
		cond.Status, cond.Reason, cond.Message = corev1.ConditionFalse, reasonContainersNotInitialized, msg
	}
	return cond
}

// anyRegularStarted reports whether a regular container runs or ran.
func anyRegularStarted(pod *corev1.Pod, statuses []corev1.ContainerStatus) bool {
	for i := range pod.Spec.Containers {
		st := findStatus(statuses, pod.Spec.Containers[i].Name)
		if st != nil && (st.State.Running != nil || st.State.Terminated != nil) {
			return true
		}
	}
	return false
}

func sandboxReadyCondition(in statusInput) corev1.PodCondition {
	c := corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse}
	if sbs := in.runtime.SandboxStatuses; len(sbs) > 0 && sbs[0].GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
		c.Status = corev1.ConditionTrue
	}
	return c
}

func findCondition(conds []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
