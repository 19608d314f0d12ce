package status

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// prepare turns a status the agent set into the one the manager caches:
// a pod never leaves a terminal phase, a condition whose status holds keeps
// its transition time, the start time never changes, and everything is
// normalized so that equal statuses compare equal. old is the cached status,
// or the pod's API status when nothing is cached; spec is the pod's. next is
// modified.
func prepare(old, next *corev1.PodStatus, spec *corev1.PodSpec, now time.Time) {
	if terminal(old.Phase) && !terminal(next.Phase) {
		next.Phase, next.Reason, next.Message = old.Phase, old.Reason, old.Message
	}
	for i := range next.Conditions {
		c := &next.Conditions[i]
		prev := findCondition(old.Conditions, c.Type)
		switch {
		case prev != nil && prev.Status == c.Status:
			c.LastTransitionTime = prev.LastTransitionTime
		case c.LastTransitionTime.IsZero():
			c.LastTransitionTime = metav1.NewTime(now)
		}
	}
	switch {
	case old.StartTime != nil && !old.StartTime.IsZero():
		t := *old.StartTime
		next.StartTime = &t
	case next.StartTime == nil || next.StartTime.IsZero():
		t := metav1.NewTime(now)
		next.StartTime = &t
	}
	normalize(next, spec)
}

// maxPodTerminationMessageLength is the kubelet's budget for the
// termination messages of one pod's containers (MaxPodTerminationMessageLogLength):
// each container's message is cut to its share.
const maxPodTerminationMessageLength = 12 * 1024

// normalize cuts every time stamp to the second, as the API server stores
// them, cuts each terminated container's message to its share of the pod's
// budget (spec's containers, init and ephemeral ones included, share it
// equally, as the kubelet's status manager does), and sorts the regular and
// ephemeral container statuses by name, so that a status read back from
// the server equals the one written.
func normalize(s *corev1.PodStatus, spec *corev1.PodSpec) {
	sec := func(t *metav1.Time) { *t = t.Rfc3339Copy() }
	if s.StartTime != nil {
		sec(s.StartTime)
	}
	for i := range s.Conditions {
		sec(&s.Conditions[i].LastProbeTime)
		sec(&s.Conditions[i].LastTransitionTime)
	}
	share := maxPodTerminationMessageLength
	if n := len(spec.Containers) + len(spec.InitContainers) + len(spec.EphemeralContainers); n > 0 {
		share /= n
	}
	state := func(c *corev1.ContainerState) {
		if c.Running != nil {
			sec(&c.Running.StartedAt)
		}
		if c.Terminated != nil {
			sec(&c.Terminated.StartedAt)
			sec(&c.Terminated.FinishedAt)
			if len(c.Terminated.Message) > share {
				c.Terminated.Message = c.Terminated.Message[:share]
			}
		}
	}
	for _, list := range [][]corev1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range list {
			state(&list[i].State)
			state(&list[i].LastTerminationState)
		}
	}
	for _, list := range [][]corev1.ContainerStatus{s.ContainerStatuses, s.EphemeralContainerStatuses} {
		sort.SliceStable(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	}
}

// agentCondition reports whether the agent alone decides the condition: the
// API's version is replaced by the agent's, or dropped if the agent has none.
func agentCondition(t corev1.PodConditionType) bool {
	switch t {
	case corev1.PodReady, corev1.ContainersReady, corev1.PodInitialized,
		corev1.PodReadyToStartContainers, corev1.PodResizePending, corev1.PodResizeInProgress:
		return true
	}
	return false
}

// sharedCondition reports whether the agent and other components both set
// the condition: the agent's version wins when it has one.
func sharedCondition(t corev1.PodConditionType) bool {
	return t == corev1.DisruptionTarget
}

// mergeForAPI returns the status to write over api, the pod's status in the
// API server: the agent's status, with the conditions other components own
// (readiness gates, PodScheduled, ...) kept from api (the agent's version of
// such a condition only fills a gap), and the fields the scheduler and
// resource claim controllers own kept from api. Conditions keep the order
// they have in api, new ones follow, so an unchanged status merges into an
// identical one. Neither argument is modified.
func mergeForAPI(api, ours *corev1.PodStatus) *corev1.PodStatus {
	out := ours.DeepCopy()
	conds := make([]corev1.PodCondition, 0, len(api.Conditions)+len(ours.Conditions))
	taken := map[corev1.PodConditionType]bool{}
	for _, c := range api.Conditions {
		mine := findCondition(ours.Conditions, c.Type)
		switch {
		case (agentCondition(c.Type) || sharedCondition(c.Type)) && mine != nil:
			conds = append(conds, *mine)
		case agentCondition(c.Type):
			// the agent no longer reports it: drop it
		default:
			conds = append(conds, c)
		}
		taken[c.Type] = true
	}
	for _, c := range ours.Conditions {
		if !taken[c.Type] {
			conds = append(conds, c)
		}
	}
	out.Conditions = conds
	if len(out.Conditions) == 0 {
		out.Conditions = nil
	}
	out.NominatedNodeName = api.NominatedNodeName
	out.ResourceClaimStatuses = api.ResourceClaimStatuses
	out.ExtendedResourceClaimStatus = api.ExtendedResourceClaimStatus
	out.NodeAllocatableResourceClaimStatuses = api.NodeAllocatableResourceClaimStatuses
	return out
}

// statusPatch returns the strategic merge patch that turns old into next for
// the pods/status subresource. It also carries metadata.uid, which the API
// server treats as a precondition: the patch fails rather than touch a pod
// recreated under the same name.
func statusPatch(uid types.UID, old, next *corev1.PodStatus) ([]byte, error) {
	oldJSON, err := json.Marshal(corev1.Pod{Status: *old})
	if err != nil {
		return nil, fmt.Errorf("encode old status: %w", err)
	}
	newJSON, err := json.Marshal(corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: *next})
	if err != nil {
		return nil, fmt.Errorf("encode new status: %w", err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldJSON, newJSON, corev1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("create status patch: %w", err)
	}
	return patch, nil
}

func findCondition(conds []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

func terminal(p corev1.PodPhase) bool {
	return p == corev1.PodSucceeded || p == corev1.PodFailed
}
