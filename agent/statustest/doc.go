// Package statustest is the conformance suite for the agent's status store
// (agent.StatusStore): an embedder who replaces it (for instance with a
// store that also writes statuses elsewhere) runs Suite against theirs.
//
// The suite checks what the agent relies on: a pod never seen has no
// status; the status set last for a pod is the one read back (phase,
// reason, message, IPs, conditions and container states; a store may
// normalize times and order container statuses by name, as
// managers/status does); pods are kept apart by UID, so a pod recreated
// under the same name does not overwrite its predecessor; a status once
// returned is never changed by a later SetPodStatus; RemovePodStatus
// forgets a pod, is idempotent and a pod set again after it is known
// again; SetPodStatus does not block when nothing drains the store (its
// Run, if any, is not running); and concurrent use from many goroutines
// ends with each pod's last status (run the suite with -race).
//
// Suite fails a testing.T with every violation; Check returns them, which
// is how the suite's own tests show it fails broken stores.
package statustest
