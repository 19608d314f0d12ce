// Package podworkers drives each pod through its one-way life on the node:
// syncing -> terminating -> terminated. It is the kubelet's pod workers
// (pkg/kubelet/pod_workers.go), cut down to the state machine.
//
// # Place in the data flow
//
// The agent's sync loop turns source changes, PLEG events, probe results
// and resync ticks into Workers.UpdatePod calls. The default implementation,
// PodWorkers, keeps one goroutine per pod UID which, for each update, waits
// for a status of the pod newer than its previous sync (StatusCache, the
// PLEG's cache) and calls the agent's SyncHandler:
//
//   - SyncPod while the pod should run; isTerminal=true (the pod reached
//     Succeeded or Failed) moves it to terminating;
//   - SyncTerminatingPod, with the effective grace period, once termination
//     is requested (SyncPodKill, a deletion timestamp, a terminal phase, or
//     the pod left the desired set), until it succeeds; a runtime-only pod
//     (RunningPod without Pod, an orphan found by housekeeping) gets
//     SyncTerminatingRuntimePod instead and is forgotten once stopped;
//   - SyncTerminatedPod once the containers are stopped, until it succeeds;
//     the pod is then finished and its goroutine exits.
//
// A terminating or terminated pod waits for the cache at most
// Config.TerminationStatusWait (5s) when the SyncHandler is also a
// PodStatusReader (the agent's is): then the handler reads the status from
// the runtime, so a pod is still killed while the PLEG's relists fail (the
// kubelet's workers wait on the cache without bound). A pod that should run
// keeps waiting for the cache.
//
// After each sync the pod is queued in the WorkQueue: after
// Config.ResyncInterval on success, after Config.BackOffPeriod on error (or
// Config.TransientRetry when the error wraps ErrTransient), both with up to
// 50% jitter, and at once on a state change. The agent's sync ticker drains
// the queue and calls UpdatePod(SyncPodSync) for the due pods; a failed sync
// is retried on the next update, in the same state.
//
// Housekeeping calls SyncKnownPods with the desired pods: finished workers of
// pods no longer desired are forgotten (so their UID may start again),
// unfinished ones are driven to termination by the workers themselves, and
// the state of the others is returned. The agent re-sends SyncPodCreate for
// desired pods missing from the result and UpdatePod(SyncPodKill,
// RunningPod) for runtime pods no worker knows.
//
// # Grace periods
//
// The API's deletionGracePeriodSeconds is authoritative; without it the
// spec's terminationGracePeriodSeconds applies (30 when unset). A kill's
// override can only shorten it, it never goes below 1s, and once a pod is
// terminating later updates can only lower it: a shorter value cancels the
// SyncTerminatingPod in progress, which is called again with it.
//
// # Restarts of a UID
//
// Termination is one-way. A SyncPodCreate for a UID that is terminating or
// terminated is ignored but remembered; once the pod has finished,
// SyncKnownPods forgets it and the next SyncPodCreate starts a fresh worker.
//
// # Concurrency
//
// Every method is safe for concurrent use and none blocks on a sync. The
// SyncHandler is called without any lock held, never twice at once for the
// same pod, concurrently for different pods. New starts no goroutine: pods
// updated before Run are recorded and start when Run runs; Run gives each
// worker a goroutine, derives every sync's context from its own, and
// returns once all of them have exited after ctx ends. Updates after Run
// returned are recorded and never synced.
//
// # Extending
//
// Workers is small: an embedder can replace PodWorkers with fx.Decorate or
// by providing its own Workers instead of Module. The agent only needs
// Workers; the WorkQueue it drains can be shared by a replacement.
package podworkers
