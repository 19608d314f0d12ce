package runtime

// LivenessResults reports which containers failed their liveness probe for
// good; the prober manager implements it. Implementations must be safe for
// concurrent use and must not block.
type LivenessResults interface {
	// LivenessFailed reports whether the container's liveness probe has
	// failed failureThreshold times in a row: the container must be killed
	// and, as its restart policy allows, started again.
	LivenessFailed(id ContainerID) bool
}

// LivenessAware is an optional capability of a Runtime that kills (and
// restarts, per restart policy) containers whose liveness probe failed, and
// regular containers whose startup probe failed (the StartupResults of
// ProbeAware). The composition root finds it by type assertion and connects
// the prober. The setter is safe to call at any time; nil restores the
// default: no container is killed for a probe.
type LivenessAware interface {
	// SetLivenessResults sets where liveness results come from.
	SetLivenessResults(LivenessResults)
}
