package shutdown

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Group is one priority group of a shutdown: its pods are terminated
// together, after every lower group.
type Group struct {
	// Priority is the lowest pod priority of the group.
	Priority int32
	// GracePeriodSeconds is how long the group's pods have, and how long
	// the shutdown waits for them before the next group.
	GracePeriodSeconds int64
	// Pods are the group's pods. They belong to the PodLister; callers
	// must not change them.
	Pods []*corev1.Pod
}

// GroupPods puts each pod in the group of the highest priority not above
// its spec.priority (0 when unset): a pod below every group goes in the
// lowest, one above every group in the highest. groups must be sorted by
// priority (Config.Groups is) and are returned with their pods; the input
// is not changed.
func GroupPods(groups []Group, pods []*corev1.Pod) []Group {
	out := make([]Group, len(groups))
	for i, g := range groups {
		out[i] = Group{Priority: g.Priority, GracePeriodSeconds: g.GracePeriodSeconds}
	}
	if len(out) == 0 {
		return out
	}
	for _, pod := range pods {
		var priority int32
		if pod.Spec.Priority != nil {
			priority = *pod.Spec.Priority
		}
		// The first group whose priority is above the pod's; the pod's
		// group is the one before it.
		i := sort.Search(len(out), func(i int) bool { return out[i].Priority > priority }) - 1
		if i < 0 {
			i = 0
		}
		out[i].Pods = append(out[i].Pods, pod)
	}
	return out
}

// GracePeriod is the grace period a pod gets in a group: the group's, or
// the pod's own terminationGracePeriodSeconds when that is not longer.
func GracePeriod(pod *corev1.Pod, group Group) int64 {
	grace := group.GracePeriodSeconds
	if own := pod.Spec.TerminationGracePeriodSeconds; own != nil && *own <= grace {
		grace = *own
	}
	return grace
}
