package prober

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Manager runs the liveness, readiness and startup probes of the pods on the
// node. The agent adds each admitted pod, hands it every API status it
// generates, and removes the pod when it is gone. All methods except Run are
// safe for concurrent use and never block on a probe.
type Manager interface {
	// Run runs the probe workers and blocks until ctx ends; every worker has
	// stopped when it returns. It returns nil on a clean stop and an error
	// when called a second time.
	Run(ctx context.Context) error
	// AddPod starts one worker per probe of each container (and of each
	// sidecar init container, restartPolicy Always) of the pod. It is
	// idempotent: a probe that already has a worker keeps it. Probe changes
	// of an added pod are not picked up. The Manager keeps pod: callers must
	// not mutate it afterwards.
	AddPod(pod *corev1.Pod)
	// RemovePod stops the pod's workers and forgets its results.
	RemovePod(pod *corev1.Pod)
	// CleanupPods stops the workers of every pod whose UID is not mapped to
	// true in desired.
	CleanupPods(desired map[types.UID]bool)
	// UpdatePodStatus sets Started and Ready of every container status in
	// status from the probe results, and records the status (container IDs,
	// start times, pod IP) for the pod's workers. It mutates status in place
	// and keeps no reference to it or to pod.
	UpdatePodStatus(pod *corev1.Pod, status *corev1.PodStatus)
}

// ResultsProvider gives access to the probe results. The default Prober
// implements it; the agent reads liveness and startup failures from it to
// restart containers, and readiness changes to refresh pod statuses.
type ResultsProvider interface {
	// Liveness returns the liveness results.
	Liveness() Results
	// Readiness returns the readiness results.
	Readiness() Results
	// Startup returns the startup results.
	Startup() Results
}

// Results is a cache of the latest result of one probe type per container,
// with a stream of its changes. It is safe for concurrent use.
type Results interface {
	// Get returns the latest result for a container ID ("type://id"); false
	// when there is none (no probe, or not probed since the agent started).
	Get(containerID string) (Result, bool)
	// Updates streams every change of a cached result. The consumer must
	// keep reading it: a worker whose update does not fit in the buffer
	// waits until it is read (or the worker stops).
	Updates() <-chan Update
}

// Update is one changed probe result.
type Update struct {
	// ContainerID is the container's "type://id".
	ContainerID string
	// Result is the new result.
	Result Result
	// PodUID is the UID of the container's pod.
	PodUID types.UID
	// Probe is the type of the probe that produced the result.
	Probe ProbeType
}

// Result is the outcome of a probe as the cache holds it.
type Result int

// Results. The zero value is Unknown.
const (
	// Unknown means no verdict yet: a startup probe that has not succeeded
	// or failed.
	Unknown Result = iota
	// Success means the probe passed SuccessThreshold times in a row.
	Success
	// Failure means the probe failed FailureThreshold times in a row, or the
	// container is not running.
	Failure
)

// String names the result.
func (r Result) String() string {
	switch r {
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	}
	return "Unknown"
}

// ProbeType is the kind of probe: liveness, readiness or startup.
type ProbeType int

// Probe types.
const (
	// Liveness probes restart a container that fails them.
	Liveness ProbeType = iota
	// Readiness probes decide whether a container is ready for traffic.
	Readiness
	// Startup probes hold back liveness and readiness until they pass, and
	// restart a container that fails them.
	Startup
)

// String names the probe type as the kubelet's events and metrics do
// ("Liveness", "Readiness", "Startup").
func (t ProbeType) String() string {
	switch t {
	case Liveness:
		return "Liveness"
	case Readiness:
		return "Readiness"
	case Startup:
		return "Startup"
	}
	return "Unknown"
}

// ExecRunner runs a command in a container and waits for it; exec probes
// use it. CRIExec adapts a CRI runtime service.
type ExecRunner interface {
	// ExecSync runs cmd in the container ("type://id") and returns its
	// output and exit code. A command that ran and exited non-zero is not an
	// error: it returns the exit code and a nil error. A command that did not
	// finish within timeout returns an error wrapping ErrExecTimeout; any
	// other error means the command could not be run. It blocks; it is
	// called concurrently for different containers.
	ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (stdout, stderr []byte, exitCode int, err error)
}

// ErrExecTimeout marks an exec that did not finish within its timeout. An
// exec probe that times out fails; any other exec error is retried.
var ErrExecTimeout = errors.New("command timed out")

// EventRecorder records events about pods and containers. It is the
// runtime package's EventRecorder, whose method has the signature of
// client-go's record.EventRecorder.Eventf, so such a recorder can be used
// as is and the prober and the runtime share one. The Prober passes a
// *corev1.ObjectReference to the container (fieldPath
// "spec.containers{name}"), as the kubelet does.
type EventRecorder = noderuntime.EventRecorder

// Event reasons the Prober records, the kubelet's.
const (
	// ReasonUnhealthy is recorded (Warning) when a probe fails or errors.
	ReasonUnhealthy = "Unhealthy"
	// ReasonProbeWarning is recorded (Warning) when an HTTP probe succeeds
	// with a warning (a redirect to another host that was not followed).
	ReasonProbeWarning = "ProbeWarning"
)

// TerminationGracePeriod returns the grace period, in seconds, to kill a
// container with after its probe failed: the probe's own
// terminationGracePeriodSeconds for a liveness or startup probe when set,
// else the pod's. It returns nil when neither is set; pod is not modified.
func TerminationGracePeriod(pod *corev1.Pod, containerName string, probe ProbeType) *int64 {
	if c := findContainer(pod, containerName); c != nil && probe != Readiness {
		if p := probeSpec(c, probe); p != nil && p.TerminationGracePeriodSeconds != nil {
			return p.TerminationGracePeriodSeconds
		}
	}
	return pod.Spec.TerminationGracePeriodSeconds
}

// findContainer returns the named container or init container of pod.
func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// probeSpec returns the container's probe of the given type, or nil.
func probeSpec(c *corev1.Container, t ProbeType) *corev1.Probe {
	switch t {
	case Liveness:
		return c.LivenessProbe
	case Readiness:
		return c.ReadinessProbe
	case Startup:
		return c.StartupProbe
	}
	return nil
}

// isSidecar reports whether c is a restartable init container.
func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}
