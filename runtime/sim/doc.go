// Package sim is a SIMULATED container runtime: an in-process implementation
// of the CRI RuntimeService and ImageManagerService interfaces
// (k8s.io/cri-api/pkg/apis), the same interfaces the CRI client satisfies.
// Nothing runs: sandboxes and containers are in-memory records that follow
// the CRI's rules, timed by a clock and scripted by pod annotations. It is
// for research, benchmarks, tests and trying nodekit without a container
// runtime, and it says so everywhere: Version reports the runtime name "sim"
// (so container IDs read "sim://<id>" in /pods) and version "0.1.0-sim".
//
// # Data flow
//
//	agent --> pod workers --> runtime/cri Manager --> criapi interfaces --> sim.Runtime
//	PLEG relist -------------------------------------^               (in process)
//	crictl / another agent --> CRI gRPC --> Serve --> sim.Runtime      (over a socket)
//
// The real runtime/cri manager, PLEG, pod workers and agent run unchanged
// on top of it: New gives a *Runtime to pass to cri.NewManager as both
// services; `nodekit run --runtime sim` does that, and `nodekit runtime-sim
// --socket PATH` serves one over gRPC with Serve.
//
// # CRI semantics
//
// IDs are 64 random hex digits from the seeded source (unique prefixes are
// accepted, as containerd accepts them); timestamps are the clock's, in
// nanoseconds. Sandboxes get an address from 10.88.0.0/16 unless they use
// the node's network. Sandbox and container names are reserved as
// containerd reserves them (a second RunPodSandbox with the same name,
// namespace, UID and attempt is AlreadyExists). An exited container has the
// reason "Completed" (exit code 0) or "Error". StopContainer: a simulated
// process handles SIGTERM at once and exits 0, unless scripted to ignore it:
// then the stop takes the whole timeout on the clock and the process is
// killed (137); a timeout of 0 kills at once. Removing a running container
// is an error; removing a sandbox stops and removes its containers. Unknown
// objects are gRPC NotFound errors, except for the removals, which are
// idempotent. List filters (ID, state, sandbox ID, label selector) are
// honoured; the label and annotation maps that ListPodSandbox and
// ListContainers answer are shared with the simulator, read-only (the
// status calls answer copies). No log files are written. The stats calls (ContainerStats,
// ListContainerStats, PodSandboxStats, ListPodSandboxStats) answer made-up
// but plausible and steady figures, derived from each container's ID and
// how long it has run (see stats.go). Methods nobody needs here (streaming
// exec, attach, port-forward, checkpoints, metrics, sandbox resource
// updates) return a gRPC Unimplemented error naming the method.
//
// # Scripting containers
//
// A pod's annotations, which the CRI manager copies onto its sandbox, script
// its containers, keyed by container name:
//
//	sim.nodekit.io/<container>.exit-after: "5s"       exit 5s after each start (exit code 0 unless exit-code)
//	sim.nodekit.io/<container>.exit-code: "1"         exit code of exit-after and crash-on-start
//	sim.nodekit.io/<container>.crash-on-start: "true" start succeeds, then the container exits at once (code 1 unless exit-code)
//	sim.nodekit.io/<container>.start-delay: "2s"      StartContainer blocks 2s on the clock
//	sim.nodekit.io/<container>.ignore-term: "true"    StopContainer takes the whole timeout, then kills (137)
//	sim.nodekit.io/<container>.exec: "1:not ready"    ExecSync result: <exit code>[:stdout]; default 0 with no output
//	sim.nodekit.io/<container>.exec-after: "30s=1"    from 30s after the start, ExecSync gives <exit code>[:stdout]
//
// A container without annotations runs until it is stopped. A bad value or
// an unknown field makes CreateContainer fail with an InvalidArgument error
// naming the annotation (the pod shows CreateContainerError). For example,
// a pod whose "app" container crashes every 5s with exit code 1, so that the
// agent's CrashLoopBackOff shows, and whose liveness probe starts failing
// after 20s:
//
//	apiVersion: v1
//	kind: Pod
//	metadata:
//	  name: crashy
//	  annotations:
//	    sim.nodekit.io/app.exit-after: "5s"
//	    sim.nodekit.io/app.exit-code: "1"
//	    sim.nodekit.io/app.exec-after: "20s=1"
//	spec:
//	  containers:
//	  - name: app
//	    image: localhost/nodekit/busybox:1
//
// # Time and latency
//
// Every call first waits its configured Latency (Config) on the clock,
// honouring ctx; a zero latency does not touch the clock at all, so a
// benchmark measures the agent and not the simulation. Scripted exits are
// scheduled with the clock's AfterFunc (the fake clock of
// k8s.io/utils/clock/testing runs them inside Step, so a test that steps
// the clock sees the exit when Step returns), or with a timer goroutine for
// a clock without AfterFunc. With the fake clock and a fixed Seed a run is
// deterministic.
//
// # Images
//
// With Config.Images empty every image is present and every pull succeeds.
// Otherwise Images is both the initial store and the registry: a pull of
// any other image fails with NotFound "image not found" (ErrImagePull in
// the agent), and CreateContainer with an absent image fails. Image IDs are
// "sha256:" plus the SHA-256 of the name.
//
// # Events
//
// GetContainerEvents streams CONTAINER_CREATED, _STARTED, _STOPPED and
// _DELETED events, for sandboxes too as containerd sends them, each with
// the sandbox's status and its containers' statuses; see its documentation
// for the callback and the end of the stream.
//
// # Concurrency
//
// Every method is safe for concurrent use. One mutex guards the state; it
// is never held while calling the clock or blocking, so a blocked
// StartContainer (start-delay) or StopContainer (ignore-term) does not stall
// other calls. New starts nothing; the runtime has no Run method.
//
// # Extending
//
// To simulate something else (a runtime that fails sandbox creation, a slow
// relist), wrap a *Runtime in a type that embeds it and overrides the
// methods concerned, then hand that to cri.NewManager or Serve.
package sim
