package sources

import (
	"sort"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nodekit/nodekit/internal/podvalidation"
)

// store holds the last snapshot of every source, keyed by source name and
// pod UID. It is not safe for concurrent use: only the Mux's merge loop
// touches it.
type store struct {
	log logr.Logger
	// pods are the pods delivered, by source and UID: a UID is delivered by
	// one source at most.
	pods map[string]map[types.UID]*corev1.Pod
	// shadowed are the pods of each source's last snapshot that were not
	// delivered because another source delivered their UID first; one is
	// delivered (ADD) when that source drops the UID.
	shadowed map[string]map[types.UID]*corev1.Pod
}

func newStore(log logr.Logger) *store {
	return &store{log: log, pods: map[string]map[types.UID]*corev1.Pod{}, shadowed: map[string]map[types.UID]*corev1.Pod{}}
}

// merge replaces source's snapshot with snapshot, which it takes ownership
// of, and returns the non-empty updates in delivery order: REMOVE, ADD,
// UPDATE, DELETE, RECONCILE of source, then the ADDs of other sources'
// pods whose UID source dropped (see shadow). The returned pods are deep
// copies. now is the first-seen time stamped on new UIDs.
func (s *store) merge(source string, snapshot []*corev1.Pod, now time.Time) []PodUpdate {
	old := s.pods[source]
	next := make(map[types.UID]*corev1.Pod, len(snapshot))
	byOp := map[Op][]*corev1.Pod{}
	names := map[string]bool{}
	owners := s.ownersBesides(source)
	shadowed := map[types.UID]*corev1.Pod{}
	for _, pod := range snapshot {
		if !s.admit(source, pod, next, shadowed, names) || s.shadow(source, pod, owners, shadowed) {
			continue
		}
		stamp(pod, source)
		next[pod.UID] = pod
		prev, known := old[pod.UID]
		if !known {
			pod.Annotations[AnnotationSeen] = now.UTC().Format(time.RFC3339Nano)
			byOp[ADD] = append(byOp[ADD], pod)
			continue
		}
		if seen, ok := prev.Annotations[AnnotationSeen]; ok {
			pod.Annotations[AnnotationSeen] = seen
		}
		if sameVersion(source, prev, pod) {
			continue
		}
		if op, changed := classify(prev, pod); changed {
			byOp[op] = append(byOp[op], pod)
		}
	}
	for uid, pod := range old {
		if _, ok := next[uid]; !ok {
			byOp[REMOVE] = append(byOp[REMOVE], pod)
		}
	}
	sort.Slice(byOp[REMOVE], func(i, j int) bool {
		return podKey(byOp[REMOVE][i]) < podKey(byOp[REMOVE][j])
	})
	s.pods[source] = next
	s.shadowed[source] = shadowed

	var out []PodUpdate
	for _, op := range []Op{REMOVE, ADD, UPDATE, DELETE, RECONCILE} {
		if len(byOp[op]) == 0 {
			continue
		}
		for _, pod := range byOp[op] {
			s.log.V(2).Info("Pod changed in source", "op", op.String(), "source", source, "pod", klog.KObj(pod), "podUID", pod.UID)
		}
		out = append(out, PodUpdate{Op: op, Pods: copyPods(byOp[op]), Source: source})
	}
	return append(out, s.promote(byOp[REMOVE], now)...)
}

// admit drops what the kubelet would not run from one snapshot: nil pods,
// pods without a UID, pods whose UID, name or namespace is not a single
// path element (the agent names directories after them), a second pod
// with the same UID (seen or held back) and a second pod with the same
// namespace/name.
func (s *store) admit(source string, pod *corev1.Pod, seen, held map[types.UID]*corev1.Pod, names map[string]bool) bool {
	if pod == nil {
		return false
	}
	switch errs := podvalidation.ValidateIdentity(pod); {
	case pod.UID == "":
		s.log.Info("Ignoring pod without UID", "source", source, "pod", klog.KObj(pod))
		return false
	case len(errs) > 0:
		s.log.Info("Ignoring pod whose UID, name or namespace is not a single path element", "source", source,
			"pod", klog.KObj(pod), "podUID", pod.UID, "err", podvalidation.Summary(errs))
		return false
	case seen[pod.UID] != nil || held[pod.UID] != nil:
		s.log.Info("Ignoring pod with duplicate UID", "source", source, "pod", klog.KObj(pod), "podUID", pod.UID)
		return false
	case names[podKey(pod)]:
		s.log.Info("Ignoring pod with duplicate name", "source", source, "pod", klog.KObj(pod), "podUID", pod.UID)
		return false
	}
	names[podKey(pod)] = true
	return true
}

// sameVersion reports whether the API server source sent the pod it sent
// before: the same UID at the same resource version is the same object, so
// the comparison of classify can be skipped. The API server source sends
// every pod of the node on each change; with 100 pods per node, comparing
// the unchanged ones was most of the merge's cost (docs/cluster-scale.md).
// Other sources' resource versions are whatever their manifests say, so
// their pods are always compared.
func sameVersion(source string, prev, next *corev1.Pod) bool {
	return source == APIServerSource && next.ResourceVersion != "" &&
		prev.ResourceVersion == next.ResourceVersion && prev.UID == next.UID
}

// classify compares the stored and the incoming version of one pod. A
// semantic change (spec, labels, non-local annotations, deletion timestamp
// or grace period) is an UPDATE, or a DELETE when the incoming pod has a
// deletion timestamp; a status-only change is a RECONCILE.
func classify(prev, next *corev1.Pod) (Op, bool) {
	if differ(prev, next) {
		if next.DeletionTimestamp != nil {
			return DELETE, true
		}
		return UPDATE, true
	}
	if !apiequality.Semantic.DeepEqual(prev.Status, next.Status) {
		return RECONCILE, true
	}
	return 0, false
}

func differ(a, b *corev1.Pod) bool {
	return !apiequality.Semantic.DeepEqual(a.Spec, b.Spec) ||
		!apiequality.Semantic.DeepEqual(a.Labels, b.Labels) ||
		!apiequality.Semantic.DeepEqual(a.DeletionTimestamp, b.DeletionTimestamp) ||
		!apiequality.Semantic.DeepEqual(a.DeletionGracePeriodSeconds, b.DeletionGracePeriodSeconds) ||
		!apiequality.Semantic.DeepEqual(foreignAnnotations(a), foreignAnnotations(b))
}

// localAnnotation reports whether the agent itself manages the annotation,
// so that it does not count as a change made by the source.
func localAnnotation(key string) bool {
	return key == AnnotationSource || key == AnnotationSeen || key == AnnotationMirror
}

func foreignAnnotations(pod *corev1.Pod) map[string]string {
	out := make(map[string]string, len(pod.Annotations))
	for k, v := range pod.Annotations {
		if !localAnnotation(k) {
			out[k] = v
		}
	}
	return out
}

func stamp(pod *corev1.Pod, source string) {
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[AnnotationSource] = source
}

func podKey(pod *corev1.Pod) string {
	return pod.Namespace + "/" + pod.Name
}

func copyPods(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, pod := range pods {
		out[i] = pod.DeepCopy()
	}
	return out
}
