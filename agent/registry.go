package agent

import (
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Registry is the set of pods the agent wants to run, keyed by UID: the
// kubelet's pod manager. It is safe for concurrent use; it stores the pods it
// is given and returns them as they are, so callers must not mutate them.
type Registry struct {
	mu   sync.RWMutex
	pods map[types.UID]*corev1.Pod
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{pods: map[types.UID]*corev1.Pod{}}
}

// Set adds or replaces a pod.
func (r *Registry) Set(pod *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pods[pod.UID] = pod
}

// Remove forgets a pod.
func (r *Registry) Remove(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.pods, uid)
}

// Get returns the pod with the UID, or nil.
func (r *Registry) Get(uid types.UID) *corev1.Pod {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.pods[uid]
}

// List returns every pod, oldest first (by creation time, then name).
func (r *Registry) List() []*corev1.Pod {
	r.mu.RLock()
	out := make([]*corev1.Pod, 0, len(r.pods))
	for _, p := range r.pods {
		out = append(out, p)
	}
	r.mu.RUnlock()
	sortByAge(out)
	return out
}

// Len returns the number of pods.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.pods)
}

func sortByAge(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
}
