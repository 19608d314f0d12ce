package sources

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// A pod UID belongs to one source at a time: the agent keys its pods by UID,
// so two sources delivering one UID would have the second overwrite the
// first, and a REMOVE from either stop a pod the other still wants. (The
// kubelet delivers both; nodekit keeps the first.) The pod of a second
// source is "shadowed": kept, not delivered, and added as soon as the first
// source drops the UID.

// ownersBesides maps every UID delivered by a source other than source to
// that source.
func (s *store) ownersBesides(source string) map[types.UID]string {
	owners := map[types.UID]string{}
	for src, pods := range s.pods {
		if src == source {
			continue
		}
		for uid := range pods {
			owners[uid] = src
		}
	}
	return owners
}

// shadow reports whether pod's UID belongs to another source; then it keeps
// pod in shadowed (stamped, with the first-seen time it had) and logs it
// once, when it starts being shadowed.
func (s *store) shadow(source string, pod *corev1.Pod, owners map[types.UID]string, shadowed map[types.UID]*corev1.Pod) bool {
	owner, ok := owners[pod.UID]
	if !ok {
		return false
	}
	stamp(pod, source)
	delete(pod.Annotations, AnnotationSeen)
	if _, before := s.shadowed[source][pod.UID]; !before {
		s.log.Info("Ignoring pod whose UID another source already has; it is added when that source drops it",
			"source", source, "owner", owner, "pod", klog.KObj(pod), "podUID", pod.UID)
	}
	shadowed[pod.UID] = pod
	return true
}

// promote delivers, for each UID a source just removed, the pod another
// source holds shadowed with that UID, as an ADD of that source, sources in
// name order.
func (s *store) promote(removed []*corev1.Pod, now time.Time) []PodUpdate {
	if len(removed) == 0 {
		return nil
	}
	srcs := make([]string, 0, len(s.shadowed))
	for src := range s.shadowed {
		srcs = append(srcs, src)
	}
	sort.Strings(srcs)
	var out []PodUpdate
	for _, r := range removed {
		for _, src := range srcs {
			pod, ok := s.shadowed[src][r.UID]
			if !ok {
				continue
			}
			delete(s.shadowed[src], r.UID)
			pod.Annotations[AnnotationSeen] = now.UTC().Format(time.RFC3339Nano)
			s.pods[src][pod.UID] = pod
			s.log.V(2).Info("Pod changed in source", "op", ADD.String(), "source", src, "pod", klog.KObj(pod), "podUID", pod.UID)
			out = append(out, PodUpdate{Op: ADD, Pods: copyPods([]*corev1.Pod{pod}), Source: src})
			break
		}
	}
	return out
}
