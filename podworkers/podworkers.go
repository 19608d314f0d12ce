package podworkers

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Workers drives every pod through syncing -> terminating -> terminated, one
// goroutine per pod. All methods are safe for concurrent use.
type Workers interface {
	// Run starts the workers' bookkeeping and blocks until ctx ends; pod
	// goroutines end with it.
	Run(ctx context.Context) error
	// UpdatePod hands a pod change to the pod's worker. It never blocks on a
	// sync: pending updates are coalesced, keeping the newest spec.
	UpdatePod(opts UpdatePodOptions)
	// SyncKnownPods forgets every finished worker whose pod is not in
	// desired, and reports the state of each worker that remains.
	SyncKnownPods(desired []*corev1.Pod) map[types.UID]PodWorkerSync
	// IsPodKnownTerminated reports whether the pod's worker has finished
	// terminating (its containers are stopped).
	IsPodKnownTerminated(uid types.UID) bool
	// CouldHaveRunningContainers reports whether the pod may still have
	// running containers: it is false once termination has finished, and
	// for unknown pods once SyncKnownPods has run.
	CouldHaveRunningContainers(uid types.UID) bool
	// IsPodTerminationRequested reports whether the pod is terminating or
	// terminated.
	IsPodTerminationRequested(uid types.UID) bool
}

// SyncHandler does the work of each state; the agent implements it.
type SyncHandler interface {
	// SyncPod sets the pod up and keeps it running. isTerminal is true when
	// the pod has reached Succeeded or Failed, which moves it to terminating.
	SyncPod(ctx context.Context, updateType UpdateType, pod, mirrorPod *corev1.Pod, status *noderuntime.PodStatus) (isTerminal bool, err error)
	// SyncTerminatingPod stops the pod's containers within gracePeriod
	// seconds. statusFn, when set, adjusts the final status (e.g. eviction).
	SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, status *noderuntime.PodStatus, gracePeriod *int64, statusFn func(*corev1.PodStatus)) error
	// SyncTerminatingRuntimePod stops a pod known only to the runtime.
	SyncTerminatingRuntimePod(ctx context.Context, runningPod *noderuntime.Pod) error
	// SyncTerminatedPod cleans up after a pod whose containers have stopped.
	SyncTerminatedPod(ctx context.Context, pod *corev1.Pod, status *noderuntime.PodStatus) error
}

// ErrTransient marks a sync error that should clear up soon (e.g. the pod
// network is not ready yet): a SyncHandler wraps it (fmt.Errorf("...: %w",
// ErrTransient)) to have the pod retried after Config.TransientRetry instead
// of Config.BackOffPeriod.
var ErrTransient = errors.New("transient error")

// StatusCache is the part of the PLEG's pod status cache that workers read.
type StatusCache interface {
	// GetNewerThan blocks until the cache holds a status of the pod observed
	// after minTime (or ctx ends), then returns it.
	GetNewerThan(ctx context.Context, uid types.UID, minTime time.Time) (*noderuntime.PodStatus, error)
}

// PodStatusReader reads a pod's status from the runtime itself, as the
// kubelet's SyncTerminatingPod does after the kill. When the SyncHandler
// implements it, a terminating or terminated pod whose StatusCache has no
// status newer than its previous sync after Config.TerminationStatusWait
// (the PLEG's relists fail) is synced with the status it reads instead, so a
// kill never waits on the cache forever. Without it, the wait has no bound.
type PodStatusReader interface {
	// GetPodStatus inspects the pod's sandboxes and containers now.
	GetPodStatus(ctx context.Context, uid types.UID, name, namespace string) (*noderuntime.PodStatus, error)
}

// UpdateType says why a pod is being updated; the kubelet's SyncPodType.
type UpdateType int

// Update types.
const (
	// SyncPodSync is a periodic resync.
	SyncPodSync UpdateType = iota
	// SyncPodUpdate is a spec change from a source.
	SyncPodUpdate
	// SyncPodCreate is a new pod.
	SyncPodCreate
	// SyncPodKill asks the pod to terminate.
	SyncPodKill
)

// String names the update type.
func (t UpdateType) String() string {
	switch t {
	case SyncPodSync:
		return "sync"
	case SyncPodUpdate:
		return "update"
	case SyncPodCreate:
		return "create"
	case SyncPodKill:
		return "kill"
	}
	return "unknown"
}

// UpdatePodOptions is one change to a pod.
type UpdatePodOptions struct {
	// UpdateType says why.
	UpdateType UpdateType
	// Pod is the desired pod; nil only with RunningPod set. The worker keeps
	// it: the caller must not mutate it afterwards.
	Pod *corev1.Pod
	// MirrorPod is the pod's mirror in the API server, if any.
	MirrorPod *corev1.Pod
	// RunningPod is a pod known only to the runtime (an orphan); it is
	// terminated with SyncTerminatingRuntimePod.
	RunningPod *noderuntime.Pod
	// KillPodOptions apply to SyncPodKill.
	KillPodOptions *KillPodOptions
}

// KillPodOptions tune a termination.
type KillPodOptions struct {
	// CompletedCh is closed when the pod has terminated.
	CompletedCh chan<- struct{}
	// Evict marks the termination as an eviction.
	Evict bool
	// PodStatusFunc adjusts the final status.
	PodStatusFunc func(*corev1.PodStatus)
	// PodTerminationGracePeriodSecondsOverride can only shorten the grace
	// period.
	PodTerminationGracePeriodSecondsOverride *int64
}

// PodWorkerState is where a worker is in its one-way state machine.
type PodWorkerState int

// Worker states.
const (
	// SyncPod: the pod is being set up and kept running.
	SyncPod PodWorkerState = iota
	// TerminatingPod: containers are being stopped.
	TerminatingPod
	// TerminatedPod: containers are stopped; cleanup runs or has run.
	TerminatedPod
)

// String names the state.
func (s PodWorkerState) String() string {
	switch s {
	case SyncPod:
		return "sync"
	case TerminatingPod:
		return "terminating"
	case TerminatedPod:
		return "terminated"
	}
	return "unknown"
}

// PodWorkerSync reports one worker's state to housekeeping.
type PodWorkerSync struct {
	// State is the worker's state.
	State PodWorkerState
	// Orphan is true when the pod is not in the desired set passed to
	// SyncKnownPods (always so for a runtime-only pod).
	Orphan bool
	// HasConfig is true when the worker has a pod spec.
	HasConfig bool
	// Static is true for static pods.
	Static bool
}
