// Package nodekit builds Kubernetes node agents: the kubelet's machinery cut
// into small packages behind small interfaces and composed with
// go.uber.org/fx, so that an embedder can replace any one piece and keep the
// rest.
//
// # The packages, in the order a pod meets them
//
//   - sources: where pods come from. A Source sends snapshots of its pods;
//     the Mux merges every source into incremental ADD, UPDATE, DELETE,
//     REMOVE and RECONCILE updates and knows when all sources have spoken.
//     sources/file reads a directory of static pod manifests, sources/http
//     a manifest URL.
//   - sources/apiserver: with a kubeconfig, the pods the API server binds to
//     this node.
//   - agent: the sync loop. It admits new pods, hands every change, PLEG
//     event and due resync to the pod workers, and cleans up in
//     housekeeping. Its Syncer is the SyncHandler the workers call: it turns
//     the runtime's view of a pod into the pod's API status and asks the
//     runtime to make the pod run.
//   - agent/admission: the admission slot, a chain of Handlers a new pod
//     must pass (the kubelet's pressure, sysctl, pod-count and resource
//     checks by default); the agent's StartGate is the start-order slot.
//   - podworkers: one goroutine per pod, driving it one way through syncing,
//     terminating and terminated, with grace periods that only shrink.
//   - pleg: the pod lifecycle event generator. It relists the runtime,
//     writes each changed pod's status into the Cache and tells the agent.
//     Pod workers read the Cache with GetNewerThan, so a sync always sees a
//     status newer than the last one. pleg/plegtest is its conformance
//     suite.
//   - runtime: the Runtime interface and its runtime-neutral types, and the
//     EventRecorder through which the runtime, the prober and the agent
//     record the kubelet's events (the log, and with a kubeconfig also the
//     API server); runtime/cri is the default, a CRI client of containerd
//     or CRI-O over k8s.io/cri-client: computePodActions decides, SyncPod
//     and KillPod act; runtime/sim is a simulated CRI runtime, in process.
//   - managers/prober: liveness, readiness and startup probes. The agent
//     adds every pod it syncs and lets it set each container's Started and
//     Ready; its results come back to the sync loop, and a failed liveness
//     (or startup) probe makes the runtime restart the container.
//   - managers/status: the status manager, which keeps each pod's newest
//     API status and sends it to the API server.
//   - managers/nodestatus: the Node object and its Lease: registration,
//     capacity, conditions (pressure, readiness), addresses
//     (managers/nodeip).
//   - managers/objects: with a kubeconfig, the API objects the node's pods
//     reference: a watch per referenced ConfigMap and Secret (the agent's
//     registry registers its pods), service account tokens from the
//     TokenRequest API, and a Services cache.
//   - managers/env: each container's environment as the kubelet makes it
//     (configMap and secret references, envFrom, the downward API, the
//     service environment); runtime/cri asks it through a cri.EnvSource.
//   - managers/volumes: every pod volume. The Syncer has it set up the
//     pod's volumes (emptyDir, hostPath, configMap, secret, downwardAPI,
//     projected with service-account tokens) before the runtime starts
//     containers, keeps the API-backed ones fresh, and tears them down once
//     the pod has stopped; a volume that cannot be set up yet leaves the pod
//     Pending with a FailedMount event. The runtime reads the host paths
//     through runtime.VolumeGetter and knows nothing about API objects.
//   - managers/shutdown: graceful node shutdown. When its Trigger
//     announces a shutdown (the default, logind's, cannot: nodekit has no
//     D-Bus client, and it says so), the node turns NotReady, new pods are
//     refused and the pods are killed through the pod workers in priority
//     groups, regular pods first and critical ones last, within the
//     --shutdown-grace-period budget.
//   - managers/certificate: the node's client credentials. With a bootstrap
//     kubeconfig, New requests the node's client certificate through a CSR
//     before it builds the Kubernetes client, and writes the kubeconfig;
//     with rotation on, every API client goes through a transport that
//     presents the current certificate, renewed at 70-90 % of its lifetime.
//   - managers/stats, managers/logs, managers/images, managers/eviction:
//     resource usage (/stats/summary), container log rotation, image
//     garbage collection, and eviction under node pressure.
//   - server: the node's HTTP API: /pods, /healthz, /metrics, and the
//     kubelet API on the secure port.
//   - runnable: the one value group of Run(ctx) work the application runs.
//   - abtest: the A/B harness: one workload under two sets of fx options
//     (built-in pleg=, start=, admission= swaps, or an embedder's own
//     through Harness.Register), a table of ratios; cmd/plegab is its
//     command line (docs/ab.md).
//   - cmd/nodekit: the ready-made agent binary.
//
// # Composition
//
// Defaults returns the fx modules of the default subsystems; New builds the
// application from a Config and those modules, and provides what is shared
// (logger, clock, configs, CRI connections). To swap a piece, add
// fx.Decorate or fx.Replace for its interface, or leave its module out and
// provide your own: the application runs the values it holds after
// decoration, so a replaced default is never started. Everything that runs
// is a member of the runnables group (package runnable), and an embedder's
// goroutine joins it the same way.
//
// # Swappable types
//
//	Interface                   Default                         Module            Example
//	pleg.Interface              *pleg.Generic (or Evented)      pleg.Module       examples/custom-pleg
//	admission.Chain (Handler)   agent.DefaultAdmission + group  agent.Module      examples/admission-by-label
//	agent.StartGate (Waker)     agent.FIFOStart                 agent.Module      examples/priority-start
//	agent.StatusStore           status.Manager (API server)     status.Module     examples/custom-status-store
//	agent.PodConfig             *sources.Mux                    sources.Module    fx.Decorate
//	sources.Source (group)      file, http, apiserver sources   sources.Module    examples/custom-source
//	podworkers.Workers          *podworkers.PodWorkers          podworkers.Module fx.Decorate
//	podworkers.SyncHandler      *agent.Syncer                   agent.Module      fx.Decorate
//	runtime.Runtime             *cri.Manager (sim: runtime/sim) cri.Module        fx.Decorate
//	runtime.EventRecorder       API events and the log          (root)            fx.Decorate
//	prober.Manager              the prober                      prober.Module     leave it out
//	volumes.Manager             *volumes.VolumeManager          volumes.Module    fx.Decorate
//	status.Manager              the status manager              status.Module     fx.Decorate
//	nodestatus.Manager          the node status reporter        nodestatus.Module fx.Decorate
//	stats.Provider              the stats provider              stats.Module      fx.Decorate
//	eviction.Manager            the eviction manager            eviction.Module   leave it out
//	eviction.Ranker             the kubelet's eviction order    eviction.Module   examples/eviction-ranking
//	shutdown.Trigger            logind (unavailable: says so)   shutdown.Module   fx.Decorate
//	images.Manager              the image GC                    images.Module     leave it out
//	logs.Manager                the log rotation                logs.Module       leave it out
//	runnable.Runnable (group)   every subsystem's Run           each module       group "runnables"
//	server.HealthCheck (group)  the agent's checks              (root)            server.AsHealthCheck
//
// Each plug-in point has a conformance suite an embedder runs against their
// own implementation: pleg/plegtest, runtime/runtimetest, agent/statustest,
// sources/sourcetest, agent/admission/admissiontest, agent/startgatetest.
// examples/sim-noroot runs the whole agent on the simulated runtime as an
// ordinary user.
package nodekit
