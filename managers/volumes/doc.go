// Package volumes is nodekit's volume manager: it owns every volume of the
// pods on the node, as the kubelet's volume manager and its emptyDir,
// hostPath, configMap, secret, downwardAPI and projected plugins do.
//
// # Data flow
//
//	agent SyncPod --SetUpPod(pod)--> Manager: set up, or refresh, each volume
//	  configMap/secret --ObjectGetter (managers/objects: watch-based caches)--> files
//	  serviceAccountToken --TokenGetter (managers/objects: token manager)--> token file
//	  downwardAPI --the pod object, NodeResources--> files
//	runtime (runtime/cri) --PodVolumes(uid), runtime.VolumeGetter--> host paths by volume name
//	agent SyncTerminatedPod --TearDownPod--> unmount tmpfs, remove <pod>/volumes
//	agent housekeeping --CleanupPods(removed)--> the same for pods gone
//	Run: every ResyncPeriod, refresh the API-backed volumes of every pod
//
// The agent calls SetUpPod before the runtime's SyncPod, on every sync. A
// volume that cannot be set up yet (a ConfigMap that does not exist, a
// token the API server refuses) makes SetUpPod return a *SetUpError
// wrapping ErrNotReady: the agent leaves the pod Pending, its containers
// waiting with reason ContainerCreating, and the manager records a Warning
// FailedMount event naming the volume and the cause ("MountVolume.SetUp
// failed for volume "cfg" : configmap "app" not found"). Each (pod, volume)
// is retried with exponential backoff, from 500ms doubling to 2m2s, as the
// kubelet's operation executor; a call inside the backoff returns the last
// error without a new attempt or event. It is never a terminal error. A
// volume type nodekit does not support fails the same way, with a message
// saying so.
//
// Volumes live where the kubelet puts them:
// <RootDir>/pods/<uid>/volumes/kubernetes.io~<plugin>/<name>. emptyDir is a
// world-writable directory, on a tmpfs for medium Memory; hostPath is
// checked against its type (DirectoryOrCreate and FileOrCreate create it).
// configMap, secret, downwardAPI and projected volumes are written the way
// the kubelet's AtomicWriter writes them: the files of each version in a
// timestamped directory (..2026_12_01_09_00_00.123456789), a ..data symlink
// to it swapped with one rename, and one symlink per top-level path into
// ..data, so a reader never sees half an update; an unchanged payload
// writes nothing. A subPath mount binds the file of the version it was
// started with, so it keeps the old content, as upstream. secret,
// downwardAPI and projected volumes are on a tmpfs (sized by the pod's
// memory limit, else the node's allocatable memory), configMap volumes on
// disk, as the kubelet backs them; all four have a root open to every user
// (0777, like the kubelet's wrapped emptyDir) and are mounted read-only
// (runtime.Volume.ReadOnly).
//
// configMap and secret volumes and projections honour items, defaultMode
// (0644 when unset), per-item mode and optional: an optional object that
// does not exist gives no files, an optional item whose key is missing is
// skipped; otherwise both are errors. A pod's fsGroup gives every file the
// group and group read (read-write on emptyDir), directories setgid, with
// fsGroupChangePolicy OnRootMismatch skipping the walk when the volume's
// root already has them. As the kubelet's, the walk runs once per emptyDir,
// when it is made, before any container runs (a ready marker under
// pods/<uid>/plugins, the kubelet's layout, keeps an agent restart from
// walking a running pod's files again), and on an API-backed volume when
// its files are written; it goes by descriptors, never follows a symlink
// (a symlink gets the group itself) and never leaves the volume, so that an
// entry a container swaps for a symlink cannot carry it out.
// serviceAccountToken projections ask the
// TokenGetter for a token of the pod's service account bound to the pod
// (BoundObjectRef), with the projection's audience (the API server's when
// unset) and expirationSeconds (3600 when unset); the token file has
// defaultMode, or 0600 owned by the pod's user when the pod sets fsGroup
// or one runAsUser, as upstream. The token manager behind TokenGetter
// returns a new token at 80% of the old one's lifetime, and the next
// refresh writes it: the container sees the new file without a restart.
// downwardAPI items read metadata.name, namespace, uid, labels and
// annotations (key="value" lines, sorted; a single key as
// metadata.labels['k']) and resourceFieldRef limits and requests of cpu,
// memory, ephemeral-storage and huge pages, divided by the divisor and
// rounded up; a limit the container does not set is the pod-level limit,
// else the node's allocatable amount. A label change reaches the file at
// the pod's next sync, which the change itself triggers.
//
// Refreshes: SetUpPod rewrites the API-backed volumes on every pod sync
// (the agent syncs each pod at least every sync period), and Run does so
// for every pod each ResyncPeriod (1m), so an edit of a ConfigMap reaches
// the files within about a period plus the cache's delay, the kubelet's
// window. A refresh that fails keeps the files as they are and records a
// FailedMount event. After an agent restart, a configMap, secret,
// downwardAPI or projected volume that cannot be refreshed but whose files
// a previous run wrote (its ..data link) is served from disk, as the
// kubelet reconstructs volumes, so running pods keep syncing.
//
// # Offline
//
// With an OfflineStore (the Module's optional parameter, or
// SetOfflineStore; nodekit provides one only when its object checkpoint,
// an opt-in, is on), every ConfigMap, Secret and token a checkpointed
// pod's configMap, secret or projected volume is made of is also kept on
// disk (internal/objectcache: 0600 files in a 0700 directory under the
// root dir). Those copies are used only while the store reports Offline
// (the API source serves its checkpoint because the API server did not
// answer at start) and the object cannot be fetched (no answer; a
// NotFound is an answer): after a reboot, which empties the tmpfs volumes,
// the pod's volumes are written again from the last good contents instead
// of the pod waiting in ContainerCreating, as KubeEdge's edge node does
// and the kubelet does not. Each volume served so is logged once, naming
// the pod and the volume; a token copy that has expired (its
// expirationTimestamp or its JWT's exp) is never written: it counts as
// missing, logged once naming the pod and the volume, and the volume
// waits for the API server. When the API
// server answers, the next refresh fetches the objects and requests a
// token as usual. A copy that cannot be read is a set-up error naming the
// pod and the volume: the pod waits. A pod's copies go when its volumes
// are torn down, and with its checkpoint (CleanupPods prunes them).
//
// # Concurrency
//
// All methods are safe for concurrent use. Set-ups of one pod are
// serialized (SetUpPod, Run's refreshes, TearDownPod); different pods
// proceed in parallel. PodVolumes never waits for a set-up. The caller of
// TearDownPod guarantees nothing of the pod runs.
//
// # Extending
//
// Replace the Manager altogether (fx.Decorate, or leave Module out and
// provide one): the agent calls SetUpPod, TearDownPod and CleanupPods, and
// the runtime reads PodVolumes. Provide another ObjectGetter (client reads,
// another cache) or TokenGetter to change where objects and tokens come
// from (the agent's Registry, not the volume manager, tells
// managers/objects which pods to watch objects for), and a TokenGetter that implements
// TokenForgetter drops a pod's tokens when its volumes are torn down.
// volumestest.Fake is a configurable fake Manager for tests.
//
// Not supported, each failing with an error that says so: persistent
// volumes and every other volume type, emptyDir on huge pages,
// clusterTrustBundle and podCertificate projections, SELinux relabelling;
// emptyDir sizeLimit on disk is not enforced (the kubelet's eviction does
// that).
package volumes
