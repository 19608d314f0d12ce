package shutdown

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
)

// The kubelet's strings for a node shutdown.
const (
	// Reason is the status reason of a pod terminated for the shutdown.
	Reason = "Terminated"
	// Message is the status message of a pod terminated for the shutdown
	// and of its DisruptionTarget condition.
	Message = "Pod was terminated in response to imminent node shutdown."
	// NotAdmittedReason is the reason a pod is refused while the node is
	// shutting down.
	NotAdmittedReason = "NodeShutdown"
	// NotAdmittedMessage is the message a pod is refused with while the
	// node is shutting down.
	NotAdmittedMessage = "Pod was rejected as the node is shutting down."
	// EventReason is the reason of the node's events about a shutdown.
	EventReason = "NodeShutdown"
)

// SystemCriticalPriority is the priority at and above which a pod is
// critical (scheduling.SystemCriticalPriority); the critical group of
// GracePeriodCriticalPods starts there.
const SystemCriticalPriority = 2 * 1000000000

var (
	// ErrShuttingDown is ShutdownStatus's error while the node shuts down;
	// its text is the Ready condition's message, as the kubelet's.
	ErrShuttingDown = errors.New("node is shutting down")
	// ErrUnavailable is wrapped by a Trigger that cannot watch this host
	// for shutdowns.
	ErrUnavailable = errors.New("graceful node shutdown unavailable")
)

// Manager runs the graceful node shutdown. Implementations must be safe
// for concurrent use.
type Manager interface {
	// Run watches for shutdowns until ctx ends and handles them; it
	// returns nil on a clean stop, also when the host cannot announce
	// shutdowns (that is logged).
	Run(ctx context.Context) error
	// ShutdownStatus returns ErrShuttingDown while the node is shutting
	// down, else nil. It does not block.
	ShutdownStatus() error
	// Admit refuses every pod, with NotAdmittedReason and
	// NotAdmittedMessage, while the node is shutting down. It does not
	// block.
	Admit(pod *corev1.Pod) (reason, message string, ok bool)
	// Changed receives a value after ShutdownStatus changed. The same
	// channel on every call; one pending value at most; never closed.
	Changed() <-chan struct{}
}

// Trigger announces that the host is about to shut down, and holds the
// shutdown back until Release, as the kubelet's delay inhibitor lock on
// systemd-logind (PrepareForShutdown) does.
type Trigger interface {
	// Watch starts watching. The channel receives true when a shutdown
	// is imminent (it is then held back until Release) and false when it
	// was cancelled (the trigger then holds the next one back again). It
	// is closed when ctx ends or watching stopped; the caller may Watch
	// again. An error that wraps ErrUnavailable means the host cannot
	// announce shutdowns this way. Watch does not block.
	Watch(ctx context.Context) (<-chan bool, error)
	// Release lets an announced shutdown go ahead (releases the
	// inhibitor). It is safe to call when nothing is held.
	Release() error
}

// PodLister lists the pods to terminate: the active ones.
type PodLister interface {
	ActivePods() []*corev1.Pod
}

// PodKiller terminates a pod with the given grace period, applying status
// to its final status; it blocks until the pod has terminated or ctx
// ends. The agent's pod workers implement it, as for evictions.
type PodKiller interface {
	KillPod(ctx context.Context, pod *corev1.Pod, gracePeriodSeconds int64, status func(*corev1.PodStatus)) error
}
