package agent

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/managers/status"
)

// StatusStore keeps the latest API status of each pod; its contract (who
// owns the statuses, what blocks) is status.Store's, documented there. The
// default keeps them in memory (MemoryStatuses); status.Manager also
// writes them to the API server.
type StatusStore = status.Store

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
