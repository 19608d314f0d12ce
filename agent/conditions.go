package agent

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Condition reasons, as the kubelet names them.
const (
	reasonContainersNotReady       = "ContainersNotReady"
	reasonContainersNotInitialized = "ContainersNotInitialized"
	reasonPodCompleted             = "PodCompleted"
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
	terminal := isTerminalPhase(s.Phase)
	ready := condition(corev1.ContainersReady, notReady(s.ContainerStatuses, s.InitContainerStatuses, in.pod), terminal)
	podReady := ready
	podReady.Type = corev1.PodReady
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

func ownedCondition(t corev1.PodConditionType) bool {
	switch t {
	case corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady,
		corev1.ContainersReady, corev1.PodScheduled:
		return true
	}
	return false
}

func condition(t corev1.PodConditionType, unready []string, terminal bool) corev1.PodCondition {
	switch {
	case terminal:
		return corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: reasonPodCompleted}
	case len(unready) > 0:
		return corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: reasonContainersNotReady,
			Message: fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))}
	}
	return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue}
}

func notReady(statuses, initStatuses []corev1.ContainerStatus, pod *corev1.Pod) []string {
	var names []string
	for i := range pod.Spec.Containers {
		if st := findStatus(statuses, pod.Spec.Containers[i].Name); st == nil || !st.Ready {
			names = append(names, pod.Spec.Containers[i].Name)
		}
	}
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		if st := findStatus(initStatuses, ic.Name); isSidecar(ic) && (st == nil || !st.Ready) {
			names = append(names, ic.Name)
		}
	}
	sort.Strings(names)
	return names
}

func initializedCondition(pod *corev1.Pod, s *corev1.PodStatus) corev1.PodCondition {
	var pending []string
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		st := findStatus(s.InitContainerStatuses, ic.Name)
		done := st != nil && ((isSidecar(ic) && st.Started != nil && *st.Started) ||
			(st.State.Terminated != nil && st.State.Terminated.ExitCode == 0))
		if !done {
			pending = append(pending, ic.Name)
		}
	}
	if len(pending) == 0 || s.Phase == corev1.PodSucceeded {
		return corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	}
	return corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionFalse,
		Reason:  reasonContainersNotInitialized,
		Message: fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(pending, " "))}
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

// podQOS returns the pod's QoS class: Guaranteed when every container limits
// cpu and memory with requests equal to limits, BestEffort when none asks
// for anything, Burstable otherwise.
func podQOS(pod *corev1.Pod) corev1.PodQOSClass {
	all := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	any, guaranteed := false, true
	for i := range all {
		r := all[i].Resources
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := r.Requests[name]; ok && !q.IsZero() {
				any = true
			}
			lim, ok := r.Limits[name]
			if ok && !lim.IsZero() {
				any = true
			}
			if !ok || lim.IsZero() {
				guaranteed = false
				continue
			}
			if req, ok := r.Requests[name]; ok && req.Cmp(lim) != 0 {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}
