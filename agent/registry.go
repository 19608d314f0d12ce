package agent

import (
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Registry is the set of pods the agent wants to run, keyed by UID, and the
// mirror pods the API server shows for its static pods: the kubelet's pod
// manager. It is safe for concurrent use; it stores the pods it is given and
// returns them as they are, so callers must not mutate them.
type Registry struct {
	mu      sync.RWMutex
	pods    map[types.UID]*corev1.Pod
	mirrors map[string]*corev1.Pod // by full name
	objects ObjectRegistrar
}

// ObjectRegistrar is told which pods the registry holds, so that the API
// objects they reference are watched while they are there, as the
// kubelet's pod manager registers pods with its secret and configMap
// managers. objects.Manager satisfies it.
type ObjectRegistrar interface {
	RegisterPod(pod *corev1.Pod)
	UnregisterPod(pod *corev1.Pod)
}

// SetObjectRegistrar sets who is told of the pods added and removed (not
// mirror pods); nil tells no one. Set it before pods arrive.
func (r *Registry) SetObjectRegistrar(o ObjectRegistrar) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.objects = o
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{pods: map[types.UID]*corev1.Pod{}, mirrors: map[string]*corev1.Pod{}}
}

// Set adds or replaces a pod; a mirror pod is recorded as the mirror of the
// static pod with its full name.
func (r *Registry) Set(pod *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if isMirror(pod) {
		r.mirrors[fullName(pod)] = pod
		return
	}
	r.pods[pod.UID] = pod
	if r.objects != nil {
		r.objects.RegisterPod(pod)
	}
}

// Remove forgets a pod (or mirror pod).
func (r *Registry) Remove(pod *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if isMirror(pod) {
		if m := r.mirrors[fullName(pod)]; m != nil && m.UID == pod.UID {
			delete(r.mirrors, fullName(pod))
		}
		return
	}
	if old, ok := r.pods[pod.UID]; ok && r.objects != nil {
		r.objects.UnregisterPod(old)
	}
	delete(r.pods, pod.UID)
}

// Get returns the pod with the UID, or nil. Mirror pods are not returned.
func (r *Registry) Get(uid types.UID) *corev1.Pod {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.pods[uid]
}

// MirrorFor returns the mirror pod of a static pod, or nil.
func (r *Registry) MirrorFor(pod *corev1.Pod) *corev1.Pod {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.mirrors[fullName(pod)]
}

// StaticFor returns the static pod a mirror pod stands for, or nil.
func (r *Registry) StaticFor(mirror *corev1.Pod) *corev1.Pod {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.staticLocked(fullName(mirror))
}

func (r *Registry) staticLocked(full string) *corev1.Pod {
	for _, p := range r.pods {
		if isStatic(p) && fullName(p) == full {
			return p
		}
	}
	return nil
}

// OrphanedMirrors returns the mirror pods whose static pod is gone.
func (r *Registry) OrphanedMirrors() []*corev1.Pod {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []*corev1.Pod
	for full, m := range r.mirrors {
		if r.staticLocked(full) == nil && m.DeletionTimestamp == nil {
			out = append(out, m)
		}
	}
	return out
}

// GetPodByUID returns a pod or mirror pod by UID, for the status manager.
func (r *Registry) GetPodByUID(uid types.UID) (*corev1.Pod, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if p, ok := r.pods[uid]; ok {
		return p, true
	}
	for _, m := range r.mirrors {
		if m.UID == uid {
			return m, true
		}
	}
	return nil, false
}

// TranslateUID returns the API object that carries a pod's status: the pod
// itself, or a static pod's mirror pod (ok false while it has none).
func (r *Registry) TranslateUID(uid types.UID) (types.UID, string, string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.pods[uid]
	if !ok {
		return "", "", "", false
	}
	if !isStatic(p) {
		return p.UID, p.Name, p.Namespace, true
	}
	m := r.mirrors[fullName(p)]
	if m == nil {
		return "", "", "", false
	}
	return m.UID, m.Name, m.Namespace, true
}

// List returns every pod, oldest first (by creation time, then name).
// Mirror pods are not listed.
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

// Len returns the number of pods, mirror pods excluded.
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
