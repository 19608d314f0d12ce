// Package cri is nodekit's default runtime.Runtime and
// runtime.GarbageCollector: the kubelet's kuberuntime manager rewritten
// small, driving any CRI v1 runtime (containerd, CRI-O) through the
// k8s.io/cri-api RuntimeService and ImageManagerService interfaces (nodekit
// connects them with k8s.io/cri-client).
//
// # Data flow
//
//	PLEG relist --> GetPods(all) / GetPodStatus(uid) --> ListPodSandbox, ListContainers,
//	                                                     PodSandboxStatus, ContainerStatus
//	pod worker --> SyncPod(pod, status) --> computePodActions (pure)
//	                 1. KillPod when the sandbox changed (then remove the init containers),
//	                    else stop unwanted containers
//	                 2. RunPodSandbox when needed, after the pod cgroup (CgroupParent/
//	                    kubepods/[<qos>/]pod<uid>, with the pod's limits) is made
//	                 3. volumes: the host paths the volume manager set up
//	                    (runtime.VolumeGetter, set through runtime.VolumeAware)
//	                 4. start ephemeral, then init, then regular containers: CrashLoopBackOff,
//	                    image (pull policy, ImagePullBackOff, pull secrets, serial or
//	                    bounded pulls), image user (runAsNonRoot), CreateContainer
//	                    (resources, security context, mounts, termination message
//	                    file), StartContainer
//	           --> KillPod(pod, runningPod, override) --> StopContainer (regular containers in
//	                    parallel, then sidecars in reverse order), StopPodSandbox
//	housekeeping --> GarbageCollect(isPodRemoved) --> RemoveContainer, RemovePodSandbox,
//	                    pod directories and pod cgroups of removed pods
//
// # Init containers, sidecars and ephemeral containers
//
// As in the kubelet with sidecars GA (v1.33+), computePodActions walks the
// init containers: they run one at a time in spec order, each to completion;
// a failed one is started again with CrashLoopBackOff, unless the pod's
// restartPolicy is Never, which kills the pod (it fails). A sidecar (an init
// container with restartPolicy Always) lets the next init container start
// once it runs and has started: a runtime.StartupResults set through
// SetStartupResults (runtime.ProbeAware) decides for a sidecar with a
// startup probe; without one, running counts as started. Sidecars are
// restarted whenever they exit, with backoff, also after initialization and
// under restartPolicy Never, and are killed and restarted when their spec
// changes; they do not keep a pod alive: once no regular container runs or
// will be restarted, the pod is killed, sidecars included. A recreated
// sandbox removes the pod's init containers so that they all run again.
// Ephemeral containers start once, when the pod's ephemeralContainers list
// names one the runtime never ran (from whichever source changed the spec),
// even before initialization ends, and are never restarted; one with a
// targetContainerName joins that container's process namespace.
//
// # Termination
//
// KillPod gives each container a budget of the pod's grace period in
// seconds (the override the pod workers computed, which only ever shrinks
// once termination started): the time the preStop hook took and then a
// sidecar's wait for its turn are taken from it, each in whole seconds
// rounded down as the kubelet counts them (so 10 s less a 2.3 s hook leaves
// 8 s), and the rest, never less than MinimumKillGracePeriod, is the stop
// timeout; with no budget left (a grace period of 0) neither runs. Regular and ephemeral
// containers stop in parallel at once; sidecars wait until every regular
// container has exited, then stop in reverse spec order (or when their
// budget runs out).
//
// # Probes and lifecycle hooks
//
// Hooks run exec handlers through the CRI ExecSync (no timeout of their
// own), httpGet handlers against the handler's host or else the pod's IP
// (127.0.0.1 for a hostNetwork pod without one; any response counts as
// success, as in the kubelet) and sleep handlers on the clock; tcpSocket
// handlers fail. postStart runs right after StartContainer (the Started
// event comes first); when it fails the container is killed (Killing
// "FailedPostStartHook", its preStop included), a FailedPostStartHook
// event is recorded and the start fails with ErrPostStartHook (waiting
// reason PostStartHookError), to be restarted as the restart policy allows.
// preStop runs before StopContainer, by the runtime.PreStopRunner when one
// is set and by the manager itself otherwise, bounded by the container's
// budget on the clock: a hook still running then is cancelled, and the
// container gets the rest (the minimum), so a pod never takes longer than
// its grace period plus MinimumKillGracePeriod (and the fractions of a
// second the rounding down leaves in, as in the kubelet).
//
// With runtime.LivenessResults set (SetLivenessResults, runtime.LivenessAware)
// a running container whose liveness probe failed is killed ("Container X
// failed liveness probe, will be restarted") and started again unless the
// restart policy is Never; so is a regular container whose startup probe
// failed (StartupResults) and a sidecar whose liveness probe failed. The
// kill uses the probe's terminationGracePeriodSeconds when set, unless the
// pod is being deleted. CrashLoopBackOff applies to the restart as to any.
//
// # Events
//
// The manager records the kubelet's events through the
// runtime.EventRecorder set with SetEventRecorder (runtime.EventAware),
// or its log without one: Pulling, Pulled, Failed (with "Error: <reason>"
// when a container cannot be created or started, naming the unsupported
// field for a CreateContainerConfigError), ErrImageNeverPull, Created,
// Started, Killing, FailedPostStartHook, FailedPreStopHook, and, on the
// pod, BackOff, SandboxChanged and FailedCreatePodSandBox. Container events
// refer to the container by field path (spec.containers{name}).
//
// A container's terminationMessagePath is backed by a host file,
// <RootDir>/pods/<uid>/containers/<name>/<random>, created before the
// container and bind-mounted into it. When the container has exited,
// GetPodStatus puts the end of that file (at most 4096 bytes) into the
// status message; under terminationMessagePolicy FallbackToLogsOnError, an
// empty file and a non-zero exit code, the tail of its log (the last 80
// lines, at most 2048 bytes) instead.
//
// # Volumes
//
// The manager knows nothing about volume types or API objects: a volume
// manager (managers/volumes) sets every volume up before SyncPod, and the
// manager reads the host path of each by name through the
// runtime.VolumeGetter given with SetVolumeGetter. It builds the CRI
// mounts: a volumeMount may name a subPath or subPathExpr (relative,
// without "..", not leaving the volume through a symlink; created when
// missing; resolved through symlinks, so a subPath of a configMap volume
// binds the file of the version it started with) and be readOnly; a volume
// marked ReadOnly is always mounted read-only. A volume that is not set up,
// or a pod with volumes and no VolumeGetter, makes every container of the
// pod fail to start with ErrConfig naming the volume. The pod's directory,
// <RootDir>/pods/<uid>, is removed (whatever is mounted below it unmounted
// first) by GarbageCollect once the pod is removed and nothing of it runs.
//
// SyncPod records every step in a runtime.SyncResult; a failed step wraps one
// of the runtime package's sentinel errors (ErrCrashLoopBackOff,
// ErrImagePullBackOff, ErrImagePull,
// ErrImageNeverPull, ErrCreatePodSandbox, ErrCreateContainer,
// ErrRunContainer, ErrKillContainer, ErrConfig), and a CrashLoopBackOff step
// carries in RetryAfter the time left before the container may start.
//
// # Resources, security context, DNS and image pulls
//
// They reach the runtime as the kubelet sends them (resources.go,
// security.go, dns.go, pulls.go): requests and limits become cpu shares, a
// CFS quota over a 100ms period and a memory limit, with the oom_score_adj
// of the pod's QoS class (internal/qos); the sandbox gets the pod's summed
// resources and its overhead. With CgroupParent set (nodekit.Config
// defaults it to "/", as the kubelet) the manager keeps the kubelet's QoS
// and pod cgroups (podcgroups.go): kubepods, kubepods/burstable,
// kubepods/besteffort and pod<uid>, with ResourceConfigForPod's values,
// PodPidsLimit and huge page limits, the pod cgroup made before the
// sandbox and given as its cgroup parent, and removed with the pod's
// directory. cgroupManager has three implementations: cgroupfs on cgroup
// v1 (cgroups_v1.go) and v2 (cgroups_v2.go, controllers enabled through
// cgroup.subtree_control), and the systemd driver (cgroups_systemd.go:
// transient slices over D-Bus, a connection opened at the first pod). Only
// cgroup v1 with cgroupfs has run on real controllers in this project's
// tests; cgroup v2 and systemd ran against a fake cgroupfs tree and a fake
// D-Bus connection (docs/configuration.md, "Pod cgroups"). The security context is the effective pod and
// container one: user, groups (fsGroup, supplementalGroups and their
// policy), capabilities, privileged, read-only root, no_new_privs, seccomp
// (RuntimeDefault, Unconfined, Localhost under SeccompProfileRoot),
// AppArmor, masked /proc paths, sysctls and host namespaces; runAsNonRoot is
// checked against the user the runtime reports for the image. DNS follows
// dnsPolicy with ClusterDNS and ClusterDomain; hostname, subdomain and
// setHostnameAsFQDN give the sandbox's hostname. An image that failed to
// pull for a pod is not pulled again for that pod before its backoff (10s,
// doubling up to 5m) ends: the step wraps ErrImagePullBackOff with the time
// left in RetryAfter. Pull secrets are read through a SecretGetter (set with
// SetSecretGetter) and matched to the image's registry as the kubelet's
// docker keyring does. A pod's runtimeClassName is resolved through a
// RuntimeClassGetter (SetRuntimeClassGetter) to the handler given to
// RunPodSandbox; an unknown class fails the sandbox (FailedCreatePodSandBox)
// and the pod stays Pending, as on the kubelet. hostUsers: false is refused
// the same way, naming the field: nodekit allocates no user namespace ID
// mappings yet. Every container that does not mount /etc/hosts itself gets
// the kubelet-managed hosts file of its pod (<pod dir>/etc-hosts: localhost,
// the pod's IPs and hostname, then its hostAliases; for a hostNetwork pod
// the node's hosts file and the hostAliases), rewritten at each start.
//
// # State lives in the runtime
//
// The manager keeps no pod state of its own except the CrashLoopBackOff
// and ImagePullBackOff delays. Sandboxes carry the pod's labels plus io.kubernetes.pod.name,
// .namespace and .uid and nodekit.io/instance=<InstanceID>, and the pod's
// annotations that a runtime may read (see below). Containers carry the same identity labels plus
// io.kubernetes.container.name, and annotations with the spec hash, the
// restart count, the termination message path and policy, the pod's grace
// periods and the ports. GetPodStatus rebuilds everything from these, so an
// agent restart recovers all state, restart counts included; when every
// instance of a container was removed, the restart count continues from the
// log files left in <RootDir>/logs/<ns>_<name>_<uid>/<container>/<n>.log.
// Every list call filters on nodekit.io/instance, so several agents (or other
// CRI clients) can share one runtime without touching each other's pods.
//
// # Listings too large for one message
//
// gRPC refuses a message over 16 MiB (codes.ResourceExhausted), and a
// runtime answers ListPodSandbox and ListContainers in one message. When a
// GetPods listing overflows, the manager logs it once and lists pod by pod
// (ListPodSandbox and ListContainers filtered on the pod UID label, after
// an unfiltered ListContainers when that one fits), so relists go on. The
// pods are those the containers name, those of earlier listings (the list
// caches) and those whose sandbox the manager ran since; only a pod of an
// earlier agent with sandboxes and no container is missed, until a full
// listing fits. A full listing is tried again a minute later, not at every
// relist: a doomed one still makes the runtime encode everything. The
// kubelet has no such fallback. Its alternative, the streamed listings of
// k8s.io/cri-client (WithUseStreaming, the alpha CRIListStreaming gate), is
// not used: containerd 2.4 serves StreamPodSandboxes and StreamContainers
// but batches 5,000 objects a message, so 80 large sandboxes still make
// one message over the limit.
//
// # Where nodekit differs from the kubelet
//
//   - Sandbox annotations: the kubelet copies all of a pod's annotations to
//     its sandbox, and the runtime returns them in every ListPodSandbox
//     answer, which gRPC caps at 16 MiB; 80 pods with a 250,000-byte
//     annotation each (within the API's 256 KiB) overflow it. nodekit copies
//     every annotation except kubectl's last-applied configuration and
//     values over MaxSandboxAnnotationValue (8 KiB), smallest first while
//     the total stays within MaxSandboxAnnotationsSize (32 KiB). The ones
//     runtimes and CNI plugins read (runtime class options, the bandwidth
//     limits, containerd's pod_annotations pass-through) are short and
//     pass. nodekit reads nothing back from sandbox annotations. Containers
//     get no pod annotations, as on the kubelet.
//   - The spec hash is FNV-64a over the JSON of the whole container with its
//     resources and resize policy cleared; the kubelet hashes only the name
//     and image because the API server forbids other changes. Sources that
//     keep a pod's UID across edits (a manifest with an explicit UID, an
//     embedder's source) thus restart a container whose command or env
//     changed, while an in-place resize still restarts nothing. A nodekit
//     upgrade whose k8s.io/api adds a container field that is encoded when
//     unset would restart containers once.
//   - Without ClusterDNS, dnsPolicy ClusterFirst gets the host's resolver
//     file, as the kubelet does (with a MissingClusterDNS warning event).
//     nodekit does not manage /etc/hosts: the runtime's own is used.
//   - Pod cgroups: no node-allocatable kubepods limits, no dynamic cpu.shares
//     of the burstable tier, no pids limit, no hugepages, no memory QoS; the
//     systemd driver and cgroup v2 only name the pod cgroup and leave it to
//     the runtime, without pod-level limits.
//   - Not supported yet (a clear ErrConfig names them): envFrom,
//     configMapKeyRef, secretKeyRef, resourceFieldRef; volumeDevices.
//     Not handled yet: credential provider plugins and the node's own
//     docker config.
//   - A pod known only to the runtime (KillPod with a nil pod) stops all its
//     containers in parallel: without the spec, sidecars are not known.
//   - The minimum kill grace period also bounds a gracePeriodOverride.
//   - A regular container that exited in the current sandbox counts as proof
//     that the pod was initialized (the kubelet counts only created or
//     running ones), so a finished pod's exited sidecars are not restarted
//     once more before the pod is killed.
//
// # Concurrency
//
// Every method is safe for concurrent use. The caller must not run SyncPod or
// KillPod concurrently for the same pod (the pod workers guarantee this);
// GarbageCollect may run at any time, as it only removes exited containers
// and objects of pods the caller reports removed. KillPod stops containers in
// parallel goroutines and returns when all stops have returned. NewManager
// does no I/O and starts nothing; the manager has no Run method.
//
// # Extending and replacing
//
// To run pods on something that is not a CRI runtime, implement
// runtime.Runtime (and optionally runtime.GarbageCollector) and provide it in
// place of Module with fx.Decorate or fx.Replace. To use this manager with a
// different CRI connection (a proxy that injects faults, a recorder), provide
// your own criapi.RuntimeService and criapi.ImageManagerService. Two
// wrappers of a criapi.RuntimeService come with it: Instrument (the kubelet's
// runtime operation metrics) and LimitStarts (at most N sandbox and container
// starts in flight, those of pods further along first; nodekit's
// Config.MaxParallelStarts). LimitStarts observes each start's wait for a
// slot in nodekit_runtime_start_slot_wait_seconds; wrapped around Instrument,
// as nodekit does, the runtime operation metrics leave that wait out.
package cri
