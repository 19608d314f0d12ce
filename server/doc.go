// Package server is the node's HTTP API, as the kubelet serves it: the
// kubelet API on the secure port (10250) and the optional read-only port
// (10255).
//
// # Place in the data flow
//
// The server only reads, and reaches into containers through the runtime.
// It asks a [PodLister] (the agent's pod registry, in the default
// composition) for the pods the node runs, runs the [HealthCheck] values it
// was given (the sync loop, the PLEG, the runtime), exposes a
// prometheus.Gatherer and, on the secure port, serves container logs, exec,
// attach and port-forward through the runtime's optional capabilities
// (runtime.LogReader, runtime.Streamer, runtime.CommandRunner). It never
// imports the agent: the interfaces it reads are owned here or by package
// runtime.
//
// # The read-only port ([Server])
//
// Plain HTTP, no authentication, on 127.0.0.1 unless
// Config.UnauthenticatedReadOnlyPortOnAnyAddress allows another address
// (it serves full pod specs, literal env values included). Routes (GET and
// HEAD; other methods get 405, unknown paths 404):
//
//	/pods            the pods as a v1 PodList in JSON
//	/healthz         "ok", or 500 naming every failing check
//	/healthz/<name>  one check; 404 for a name no check has
//	/metrics         the gatherer in the Prometheus text format (404 without one)
//
// The aggregate /healthz leaves out the checks named "runtime" and "pleg"
// ([RuntimeCheckName], [PLEGCheckName]) unless Config.HealthzIncludeRuntime
// is set: as the kubelet's, it does not fail when the container runtime is
// down or hung (their health goes into the node's Ready condition), so a
// supervisor that restarts the agent on a failing /healthz does not restart
// it for the runtime's fault. /healthz/runtime and /healthz/pleg always
// serve the checks. The secure server listens on Config.SecureAddress
// (every address by default, as the kubelet's --address), the read-only
// server on Config.Address (loopback by default).
//
// # The secure port ([SecureServer])
//
// TLS with Config.TLSCertFile, a certificate rotated through a
// kubernetes.io/kubelet-serving CertificateSigningRequest
// (Config.RotateServerCertificates, client-go's certificate manager), or a
// self-signed one made in CertDir (kubelet.crt, kubelet.key). Both name the
// node's IP addresses from SecureDeps.NodeIPs (the agent's nodeip.Source),
// so a client dialing the node's IP can verify them. Every
// request is authenticated with k8s.io/apiserver's delegating authenticator
// (client certificates against Config.ClientCAFile, and none accepted
// without it, as the kubelet; bearer tokens through TokenReview;
// anonymous requests get 401
// unless Config.AnonymousAuth) and authorized with its delegating
// authorizer (SubjectAccessReview on the node object; allowed decisions
// cached 5 minutes, denied 30 seconds). The attributes are the kubelet
// v1.37's: the verb from the method (GET get, POST create, PUT update,
// PATCH patch, DELETE delete), resource nodes, and the subresource from the
// path: /stats/* stats, /metrics/* metrics, /logs/* log; /pods,
// /runningpods, /healthz and /configz first their own (pods, healthz,
// configz), then proxy; everything else proxy. Routes:
//
//	/pods, /healthz, /healthz/<name>, /metrics   as on the read-only port
//	/metrics/probes                              the prober_* families of the gatherer
//	/runningpods/                                the pods the runtime runs
//	/configz                                     the agent's configuration, header values redacted
//	/containerLogs/{ns}/{pod}/{container}        follow, tailLines, sinceSeconds, sinceTime,
//	                                             timestamps, previous, limitBytes, stream
//	/exec/{ns}/{pod}[/{uid}]/{container}         command, input, output, error, tty
//	/attach/{ns}/{pod}[/{uid}]/{container}
//	/portForward/{ns}/{pod}[/{uid}]
//	/run/{ns}/{pod}[/{uid}]/{container}          POST, cmd: ExecSync, output returned
//	/debug/pprof/                                net/http/pprof, GET only (EnableProfilingHandler)
//	/debug/flags/v                               PUT sets the log verbosity (EnableDebugFlagsHandler)
//	/logs/                                       the files of SystemLogDir (EnableSystemLogHandler)
//
// TLS is 1.2 or later (TLSMinVersion) with ECDHE AEAD suites unless
// TLSCipherSuites says otherwise; insecure suites are refused. Exec,
// attach and port-forward connections idle for
// StreamingConnectionIdleTimeout (4h) are closed. Exec, attach and
// port-forward ask the runtime for a streaming URL and
// proxy the client's upgraded connection there with apimachinery's
// upgrade-aware proxy (SPDY). A WebSocket request with the v5 stream-close
// protocol (exec, attach) or the SPDY tunneling protocol (port-forward), as
// kubectl 1.30+ sends when the API server passes it through, is translated
// to SPDY for the runtime, as the kubelet does. The secure server needs a
// Kubernetes client; without one (a standalone node) it logs that and stays
// off.
//
// # Lifecycle and concurrency
//
// [New] and [NewSecure] do no I/O. Run listens and serves until its context
// ends, then shuts down gracefully for at most Config.ShutdownTimeout. A
// port of 0 turns that server off: Run logs that and returns nil at once.
// Serve serves on a listener the caller opened (tests use 127.0.0.1:0).
// [Server.Handler] is the read-only routes without a listener. Both servers
// use the kubelet's timeouts: idle 90s, read and write 4h (room for logs -f
// and exec), headers 1 MiB.
//
// Every handler runs on its own goroutine, so PodLister.GetPods and
// HealthCheck.Check must be safe for concurrent use; they should return
// quickly, since a probe of /healthz waits for every check.
//
// # Extending and replacing
//
// Health checks are collected by fx in the value group "healthchecks"; a
// package contributes one with [AsHealthCheck]. To replace the pod source,
// provide another PodLister; a runtime without the streaming capabilities
// gets 501 on those routes. To replace a server, leave [Module] out of the
// app and run your own.
package server
