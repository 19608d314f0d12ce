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
//	                 1. KillPod when the sandbox changed, else stop unwanted containers
//	                 2. RunPodSandbox when needed
//	                 3. per container: CrashLoopBackOff, image (pull policy),
//	                    CreateContainer, StartContainer
//	           --> KillPod(pod, runningPod, override) --> StopContainer (parallel), StopPodSandbox
//	housekeeping --> GarbageCollect(isPodRemoved) --> RemoveContainer, RemovePodSandbox
//
// SyncPod records every step in a runtime.SyncResult; a failed step wraps one
// of the runtime package's sentinel errors (ErrCrashLoopBackOff, ErrImagePull,
// ErrImageNeverPull, ErrCreatePodSandbox, ErrCreateContainer,
// ErrRunContainer, ErrKillContainer, ErrConfig), and a CrashLoopBackOff step
// carries in RetryAfter the time left before the container may start.
//
// # State lives in the runtime
//
// The manager keeps no pod state of its own except the CrashLoopBackOff
// delays. Sandboxes carry the pod's labels plus io.kubernetes.pod.name,
// .namespace and .uid and nodekit.io/instance=<InstanceID>, and the pod's
// annotations. Containers carry the same identity labels plus
// io.kubernetes.container.name, and annotations with the spec hash, the
// restart count, the termination message path and policy, the pod's grace
// periods and the ports. GetPodStatus rebuilds everything from these, so an
// agent restart recovers all state, restart counts included; when every
// instance of a container was removed, the restart count continues from the
// log files left in <RootDir>/logs/<ns>_<name>_<uid>/<container>/<n>.log.
// Every list call filters on nodekit.io/instance, so several agents (or other
// CRI clients) can share one runtime without touching each other's pods.
//
// # Where nodekit differs from the kubelet
//
//   - The spec hash is FNV-64a over the JSON of the whole container with its
//     resources and resize policy cleared; the kubelet hashes only the name
//     and image because the API server forbids other changes. Sources that
//     keep a pod's UID across edits (a manifest with an explicit UID, an
//     embedder's source) thus restart a container whose command or env
//     changed, while an in-place resize still restarts nothing. A nodekit
//     upgrade whose k8s.io/api adds a container field that is encoded when
//     unset would restart containers once.
//   - No cluster DNS: dnsPolicy ClusterFirst gets the host's resolver file,
//     as the kubelet does when it has no cluster DNS configured.
//   - Not supported yet (a clear ErrConfig names them): envFrom,
//     configMapKeyRef, secretKeyRef, resourceFieldRef; volumes, init,
//     sidecar and ephemeral containers, lifecycle hooks, resource limits and
//     image pull backoff are not handled.
//   - The minimum kill grace period also bounds a gracePeriodOverride.
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
// your own criapi.RuntimeService and criapi.ImageManagerService.
package cri
