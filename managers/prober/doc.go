// Package prober runs the liveness, readiness and startup probes of the
// containers on the node, as the kubelet's prober does: exec, httpGet,
// tcpSocket and grpc handlers, initialDelaySeconds, periodSeconds,
// timeoutSeconds and success/failure thresholds counted as runs, startup
// probes gating the other two.
//
// # Data flow
//
//	agent --AddPod/RemovePod/CleanupPods--> Prober: one worker per container probe
//	agent --UpdatePodStatus(pod, status)--> Prober: sets Started/Ready, records IDs, start times, pod IP
//	worker --reads the recorded status--> probe (ExecRunner, HTTP, TCP, gRPC)
//	worker --result--> Results (Liveness, Readiness, Startup) --Updates()--> agent sync loop
//
// The agent calls AddPod when it admits a pod; every sync, when it turns the
// runtime status into the pod's API status, it calls UpdatePodStatus, which
// sets each container's Started and Ready from the cached results and
// records what the pod's workers need: container IDs, whether each runs and
// since when, the pod IP, the phase, whether the pod is being deleted.
//
// Each worker ticks every periodSeconds (its first tick jittered within the
// period while the Prober is younger than one period, so that an agent
// restart does not fire every probe at once; Config.Seed makes the jitter
// repeatable). On a tick it looks up its container in the recorded status;
// a new container ID starts its counters and result over (readiness at
// Failure, liveness at Success, startup at Unknown). It probes once the
// container has run for initialDelaySeconds, liveness and readiness only
// after the container has started (its startup probe succeeded), startup
// only before. One run retries up to Config.Retries times on an error (not
// on a failure); an errored run does not count. A result is cached once it
// repeats successThreshold or failureThreshold times in a row, and every
// change goes out on the Updates channel of that probe type. A final
// liveness failure and a startup verdict hold the worker until the container
// is replaced: the agent reads the Failure (Results.Get) and restarts the
// container, with TerminationGracePeriod as its grace period. Failed and
// errored probes record an "Unhealthy" Warning event, as the kubelet's.
// prober_probe_total and prober_probe_duration_seconds count the runs.
//
// After an agent restart, a container that was running before the Prober
// started (Config.RestartGracePeriod) is adopted: its workers set no
// initial result, and UpdatePodStatus keeps the Started the agent carried
// over from the old status, and Ready when the pod was Ready, until the
// probes report, so that a restart does not flap readiness.
//
// # Concurrency
//
// Run starts the workers (those added before it and after) and waits for
// all of them when ctx ends. AddPod, RemovePod, CleanupPods,
// UpdatePodStatus and the Results are safe for concurrent use and never
// wait for a probe. A worker whose update does not fit in the channel
// buffer waits for the agent to read it, or for its stop: the agent must
// drain all three Updates channels.
//
// # Extending
//
// Provide another ExecRunner to run exec probes elsewhere (CRIExec adapts a
// CRI runtime service; its exit-code and timeout errors are mapped there),
// another EventRecorder (client-go's record.EventRecorder fits as is), or
// replace the Manager altogether; the agent needs the ResultsProvider
// capability (Liveness, Readiness, Startup) to restart containers, and an
// embedder's Manager should implement it. StopLivenessAndStartup is a
// further optional capability for pods that start terminating.
//
// Not supported: the alpha gRPC TLS mode and HTTP/2 cleartext probes (their
// fields are ignored, as with their feature gates off).
package prober
