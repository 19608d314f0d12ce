package status

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Store keeps the newest API status of each pod: the one contract of the
// status store, which the agent uses as agent.StatusStore (an alias) and
// which Manager extends. Implementations are safe for concurrent use.
type Store interface {
	// SetPodStatus records the pod's newest status. It must not block on
	// I/O. The caller hands status over and must not mutate it afterwards:
	// an implementation may keep it as it is (agent.MemoryStatuses does)
	// or copy it (StatusManager does).
	SetPodStatus(pod *corev1.Pod, status *corev1.PodStatus)
	// GetPodStatus returns the pod's last recorded status. The caller must
	// not mutate it.
	GetPodStatus(uid types.UID) (*corev1.PodStatus, bool)
	// RemovePodStatus forgets the pod. Idempotent.
	RemovePodStatus(uid types.UID)
}

// Manager is a Store that also writes the statuses to the API server
// (SetPodStatus schedules the write, never blocking on the network), so a
// Manager can stand in for the agent's in-memory default. All methods are
// safe for concurrent use.
type Manager interface {
	Store
	// Run writes statuses to the API server until ctx ends, then returns
	// nil. Without an API client it only waits for ctx.
	Run(ctx context.Context) error
}

// PodResolver tells the manager where a pod's status goes and what the API
// server last said about a pod. The agent implements it over its pod
// registry. Its methods are called from Run's goroutine only, never while
// the manager holds its lock, so they may call back into the manager.
type PodResolver interface {
	// GetPodByUID returns the pod the agent knows by uid, as its source
	// last sent it: an API pod (with its API status), a static pod, or a
	// mirror pod. The manager reads it and never mutates it. The manager
	// uses it to notice that the API status drifted from the cached one
	// (for a static pod it looks up the mirror pod's UID) and to see that a
	// pod is being deleted.
	GetPodByUID(uid types.UID) (*corev1.Pod, bool)
	// TranslateUID returns the API object that carries the status of the
	// pod with uid: for a static pod its mirror pod's UID, name and
	// namespace; for an API pod the pod itself. ok is false when there is
	// no such object yet (a static pod whose mirror pod does not exist): the
	// status then waits.
	TranslateUID(uid types.UID) (apiUID types.UID, name, namespace string, ok bool)
}

// DeletionSafety tells the manager when a deleted pod may leave the API
// server. The agent implements it.
type DeletionSafety interface {
	// PodResourcesAreReclaimed reports whether the pod has released
	// everything on the node: its containers have stopped and its worker has
	// terminated. status is the pod's newest cached status. Called from
	// Run's goroutine only.
	PodResourcesAreReclaimed(pod *corev1.Pod, status *corev1.PodStatus) bool
}

// MirrorClient creates and deletes mirror pods: the API server's read-only
// copies of static pods, through which the control plane sees them. Safe
// for concurrent use.
type MirrorClient interface {
	// CreateMirrorPod creates the mirror pod of staticPod, which must carry
	// the kubernetes.io/config.hash annotation. A mirror pod with the same
	// hash that already exists is not an error.
	CreateMirrorPod(ctx context.Context, staticPod *corev1.Pod) error
	// DeleteMirrorPod deletes the mirror pod podFullName ("name_namespace")
	// at once (grace period 0), only if its UID is *uid when uid is not
	// nil. It reports whether it deleted a pod; a pod already gone or with
	// another UID is no error.
	DeleteMirrorPod(ctx context.Context, podFullName string, uid *types.UID) (bool, error)
}
