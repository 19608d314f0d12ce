// Package server is the node's read-only HTTP server: the part of the
// kubelet's server on its read-only port that tells an operator what the node
// is doing.
//
// # Place in the data flow
//
// The server only reads. It asks a [PodLister] (the agent's pod registry, in
// the default composition) for the pods the node runs, runs the
// [HealthCheck] values it was given (the sync loop, the PLEG, the runtime)
// and exposes a prometheus.Gatherer. It never imports the agent: the
// interfaces it reads are owned here, so anything that can list pods or
// report health can be plugged in.
//
// Routes (GET and HEAD only; any other method gets 405, unknown paths 404):
//
//	/pods            the pods as a v1 PodList in JSON
//	/healthz         "ok", or 500 naming every failing check
//	/healthz/<name>  one check; 404 for a name no check has
//	/metrics         the gatherer in the Prometheus text format (404 without one)
//
// # Lifecycle and concurrency
//
// [New] does no I/O. [Server.Run] listens on Config.Address and Config.Port
// and serves until its context ends, then shuts down gracefully for at most
// Config.ShutdownTimeout. A Config with Port 0 turns the server off: Run logs
// that and returns nil at once. [Server.Serve] serves on a listener the
// caller opened (tests use 127.0.0.1:0). [Server.Handler] is the routes
// without a listener, for httptest or for mounting in another server.
//
// Every handler runs on its own goroutine, so PodLister.GetPods and
// HealthCheck.Check must be safe for concurrent use; they should return
// quickly, since a probe of /healthz waits for every check.
//
// # Extending and replacing
//
// Health checks are collected by fx in the value group "healthchecks"; a
// package contributes one with [AsHealthCheck]. To replace the pod source,
// provide another PodLister. To replace the whole server, leave [Module] out
// of the app and run your own: nothing else depends on *Server.
package server
