// Package status is the status manager: it keeps the newest API status of
// every pod and writes it to the API server, as the kubelet's
// status_manager.go does; and the mirror client, which creates and deletes
// the mirror pods of static pods (the kubelet's mirror_client.go).
//
// # Data flow
//
// The agent's pod workers call [StatusManager.SetPodStatus] with each status
// they compute; the Manager is the agent's StatusStore. SetPodStatus keeps
// what must not move (a terminal phase is never left, a condition whose
// status holds keeps its LastTransitionTime, the start time is kept), cuts
// times to the second as the API server stores them and compares the
// result with the cached status: an equal status is a no-op; a different
// one gets the next version number and wakes the sync loop. It never
// blocks on the network.
//
// [StatusManager.Run] writes each new version at once and, every
// Config.SyncPeriod (10s), looks at every cached status. Per pod it:
//
//  1. asks the PodResolver where the status goes: a static pod's status
//     goes to its mirror pod (and waits while there is none);
//  2. GETs the pod and skips it if it is gone or has another UID (deleted
//     and recreated);
//  3. merges: the agent's conditions (Ready, ContainersReady, Initialized,
//     PodReadyToStartContainers, resize) replace the API's, DisruptionTarget
//     too when the agent sets it, other components' conditions and the
//     scheduler's and claim controllers' fields are kept;
//  4. PATCHes pods/status with a strategic merge patch of the status
//     (plus metadata.uid, which the server treats as a precondition), and
//     records the version written for the API UID;
//  5. deletes a pod that has a deletionTimestamp once its status is written
//     and the DeletionSafety says its resources are reclaimed: grace period
//     0 with a UID precondition. Mirror pods are never deleted this way.
//
// The periodic pass also rewrites a status that someone else changed in the
// API server (the PodResolver's copy of the pod differs from what the
// manager would write) and deletes pods whose resources were reclaimed after
// their last write. A failed read or write is retried for that pod alone,
// with backoff from 100ms doubling to 10s, and by every periodic pass; a
// newer status set meanwhile replaces the pending one, so when an
// unreachable API server returns, the newest status is what gets written.
// Each pass writes the pending statuses oldest change first; and the first
// answer after requests that got none (the API server was away: e.g. an
// agent that runs its checkpointed pods offline) makes every pod that backs
// off due at once, so the statuses set meanwhile all catch up in that
// order instead of each after its own backoff. Pods deleted or recreated
// in the API server meanwhile are skipped as always: the manager never
// creates or deletes a pod because of a status set while it was away.
//
// Differences from the kubelet: the terminal phase is not held back while
// containers may still run (the agent only reports a terminal phase once
// they stopped), and deletion does not also wait for a terminal phase in
// the API, only for the newest status to be written and the resources
// reclaimed.
//
// Standalone mode: with a nil client the manager is a memory store and Run
// only waits for its context.
//
// # Concurrency
//
// SetPodStatus, GetPodStatus and RemovePodStatus are safe for concurrent
// use and never block on I/O. Run is one goroutine; it calls the
// PodResolver and DeletionSafety without holding the manager's lock, so they
// may call back into it. The APIMirrorClient is safe for concurrent use.
//
// # Extending
//
// To send statuses elsewhere, implement Manager (or only the agent's
// StatusStore) and provide it instead of Module's. The PodResolver and
// DeletionSafety are the agent's: replace them to change where statuses go
// or when deleted pods may leave the API server.
package status
