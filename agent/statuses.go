package agent

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// StatusStore keeps the latest API status of each pod. The default keeps it
// in memory; a status manager that also writes it to the API server
// implements the same interface. Implementations are safe for concurrent use.
type StatusStore interface {
	// SetPodStatus records the pod's newest status. It must not block on
	// I/O. The caller hands status over and must not mutate it afterwards:
	// an implementation may keep it (MemoryStatuses does) or copy it
	// (status.Manager does, so its callers may reuse it).
	SetPodStatus(pod *corev1.Pod, status *corev1.PodStatus)
	// GetPodStatus returns the pod's last status. The caller must not mutate
	// it.
	GetPodStatus(uid types.UID) (*corev1.PodStatus, bool)
	// RemovePodStatus forgets the pod. Idempotent.
	RemovePodStatus(uid types.UID)
}

// MemoryStatuses is the default StatusStore: a map guarded by a mutex.
type MemoryStatuses struct {
	mu       sync.RWMutex
	statuses map[types.UID]*corev1.PodStatus
}

var _ StatusStore = (*MemoryStatuses)(nil)

// NewMemoryStatuses returns an empty store.
func NewMemoryStatuses() *MemoryStatuses {
	return &MemoryStatuses{statuses: map[types.UID]*corev1.PodStatus{}}
}

// SetPodStatus implements StatusStore.
func (m *MemoryStatuses) SetPodStatus(pod *corev1.Pod, status *corev1.PodStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.statuses[pod.UID] = status
}

// GetPodStatus implements StatusStore.
func (m *MemoryStatuses) GetPodStatus(uid types.UID) (*corev1.PodStatus, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.statuses[uid]
	return s, ok
}

// RemovePodStatus implements StatusStore.
func (m *MemoryStatuses) RemovePodStatus(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.statuses, uid)
}
