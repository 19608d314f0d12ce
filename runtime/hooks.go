package runtime

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// StartupResult is what a container's startup probe has found so far.
type StartupResult int

// Startup results.
const (
	// StartupUnknown means there is no result yet: a sidecar with a startup
	// probe does not count as started, and the next init step waits.
	StartupUnknown StartupResult = iota
	// StartupSucceeded means the startup probe succeeded.
	StartupSucceeded
	// StartupFailed means the startup probe failed for good: a sidecar is
	// killed and started again.
	StartupFailed
)

// StartupResults reports startup-probe results by container ID; the prober
// manager implements it. Implementations must be safe for concurrent use and
// must not block.
type StartupResults interface {
	// StartupResult returns the latest result for the container, or
	// StartupUnknown when the probe has not decided yet.
	StartupResult(id ContainerID) StartupResult
}

// PreStopRunner runs a container's preStop hook. The runtime calls it while
// stopping the container, with ctx ending when the container's termination
// budget runs out; the time it takes is taken from that budget.
type PreStopRunner interface {
	// RunPreStop runs c.Lifecycle.PreStop in or against the container id of
	// pod, and returns when the hook finished or ctx ended.
	RunPreStop(ctx context.Context, pod *corev1.Pod, c *corev1.Container, id ContainerID) error
}

// ProbeAware is an optional capability of a Runtime that gates sidecars on
// their startup probes and runs preStop hooks inside the termination budget.
// The composition root finds it by type assertion and connects the prober.
// Both setters are safe to call at any time; nil restores the default.
type ProbeAware interface {
	// SetStartupResults sets where startup results come from. Without it a
	// sidecar counts as started as soon as it runs.
	SetStartupResults(StartupResults)
	// SetPreStopRunner sets who runs preStop hooks. Without it the
	// runtime's own default runs them (runtime/cri runs exec, httpGet and
	// sleep hooks itself); a runtime without one runs none.
	SetPreStopRunner(PreStopRunner)
}
