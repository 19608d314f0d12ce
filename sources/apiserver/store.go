package apiserver

import (
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/cache"
)

// podStore is the reflector's store: the node's pods keyed by
// namespace/name. It signals changed after the first Replace (the initial
// list) and after every real change; writes that change nothing (a relist
// after the API server came back) do not signal. Safe for concurrent use:
// the reflector writes it, the Source's loop reads it.
type podStore struct {
	nodeName string
	changed  chan struct{}

	mu     sync.Mutex
	pods   map[string]*corev1.Pod
	synced bool
	// changes counts the signalled changes, for tests.
	changes int
}

var _ cache.ReflectorStore = (*podStore)(nil)

func newPodStore(nodeName string) *podStore {
	return &podStore{
		nodeName: nodeName,
		changed:  make(chan struct{}, 1),
		pods:     map[string]*corev1.Pod{},
	}
}

// Add implements cache.ReflectorStore.
func (s *podStore) Add(obj any) error {
	return s.put(obj)
}

// Update implements cache.ReflectorStore.
func (s *podStore) Update(obj any) error {
	return s.put(obj)
}

// Delete implements cache.ReflectorStore.
func (s *podStore) Delete(obj any) error {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return fmt.Errorf("api source: key of deleted object: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pods[key]; ok {
		delete(s.pods, key)
		s.notifyLocked()
	}
	return nil
}

// Replace implements cache.ReflectorStore: the reflector's (re)list.
func (s *podStore) Replace(list []any, _ string) error {
	next := make(map[string]*corev1.Pod, len(list))
	for _, obj := range list {
		pod, key, err := s.podOf(obj)
		if err != nil {
			return err
		}
		if pod != nil {
			next[key] = pod
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := !s.synced || len(next) != len(s.pods)
	for key, pod := range next {
		if changed {
			break
		}
		changed = !samePod(s.pods[key], pod)
	}
	s.pods = next
	s.synced = true
	if changed {
		s.notifyLocked()
	}
	return nil
}

// Resync implements cache.ReflectorStore; there is nothing to resync.
func (s *podStore) Resync() error {
	return nil
}

// put stores an added or updated pod. A pod that is not (or no longer)
// bound to this node counts as deleted: the field selector should have kept
// it out, but not every server honours it (client-go's fake does not).
func (s *podStore) put(obj any) error {
	pod, key, err := s.podOf(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.pods[key]
	switch {
	case pod == nil && had:
		delete(s.pods, key)
	case pod == nil || samePod(old, pod):
		return nil
	default:
		s.pods[key] = pod
	}
	s.notifyLocked()
	return nil
}

// podOf returns the pod and its key, or a nil pod if it belongs to another
// node.
func (s *podStore) podOf(obj any) (*corev1.Pod, string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, "", fmt.Errorf("api source: got %T, want *v1.Pod", obj)
	}
	key, err := cache.MetaNamespaceKeyFunc(pod)
	if err != nil {
		return nil, "", fmt.Errorf("api source: key of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if pod.Spec.NodeName != s.nodeName {
		return nil, key, nil
	}
	return pod, key, nil
}

// notifyLocked signals a change without blocking: one pending signal stands
// for any number of changes.
func (s *podStore) notifyLocked() {
	if !s.synced {
		return
	}
	s.changes++
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// snapshot returns deep copies of the pods, sorted by namespace/name. The
// caller owns the copies.
func (s *podStore) snapshot() []*corev1.Pod {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.pods))
	for key := range s.pods {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	out := make([]*corev1.Pod, 0, len(keys))
	for _, key := range keys {
		out = append(out, s.pods[key].DeepCopy())
	}
	return out
}

// samePod reports whether two versions of a pod are the same object: equal
// resource versions of the same UID, or (for servers that do not set
// resource versions, like client-go's fake) semantically equal content.
func samePod(a, b *corev1.Pod) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.UID == b.UID && a.ResourceVersion != "" && a.ResourceVersion == b.ResourceVersion {
		return true
	}
	return apiequality.Semantic.DeepEqual(a, b)
}
