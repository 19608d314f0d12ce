// Package agent is the heart of a nodekit node agent: the sync loop and the
// SyncHandler the pod workers call.
//
// # Data flow
//
// The sync loop (Agent.Run) selects over these inputs, as the kubelet's
// syncLoopIteration does:
//
//   - pod changes from the PodConfig (the sources.Mux): ADD admits and starts
//     pods, UPDATE and DELETE hand the new spec to the pod's worker, REMOVE
//     asks the worker to terminate the pod, RECONCILE records the pod and
//     syncs it only when a readiness gate's condition changed what its
//     Ready condition must be;
//   - PLEG events: the pod whose containers changed is synced;
//   - the sync ticker (1s): pods whose periodic resync is due (the pod
//     workers' WorkQueue) are synced;
//   - the housekeeping ticker (2s): the runtime's running pods are listed on
//     a goroutine of its own (bounded by HousekeepingTimeout) and, when the
//     listing arrives, finished workers are forgotten, desired pods whose
//     worker finished (a reused UID) are started again, pods that only the
//     runtime knows are stopped and probes of pods that are gone are
//     stopped;
//   - probe results (when the agent has a prober that is a
//     prober.ResultsProvider; all three streams are drained): a liveness
//     failure syncs the pod, so that the runtime kills and restarts the
//     container; a readiness or startup change syncs it, so that its status
//     (Ready, ContainersReady, Started) is regenerated.
//
// Every sync goes through podworkers.Workers, which calls the Syncer (this
// package's podworkers.SyncHandler) on the pod's own goroutine. The Syncer
// converts the runtime's pod status into the pod's API status
// (generateAPIPodStatus: phase, conditions, container states), records it in
// the StatusStore, and asks the runtime.Runtime to make the pod run.
//
// Probes: with a prober.Manager (Deps.Prober for the loop, WithProber for
// the Syncer; the agent runs it), every synced pod is added to the prober;
// when a status is generated, the prober sets each container's Started and
// Ready before the pod's conditions are computed from them; a terminating
// pod's liveness and startup probes stop at once and the pod is removed
// from the prober once its containers stopped. After an agent restart the
// prober adopts containers that were running before it: they keep the
// Started of the old status (the pod's status from the API server, or the
// agent's last one) and stay Ready while the pod was Ready; a static pod,
// whose old status is gone, counts as having been Ready.
//
// Admission (the admission.Chain, Deps.Admission): a new pod must pass
// every handler, given the pods already active; the first refusal makes it
// Failed with that handler's reason and a Warning event. DefaultAdmission
// is the kubelet's handlers in its order: under node pressure
// (PressureAdmitter) the eviction manager's verdict; SysctlForbidden when
// it sets a sysctl outside the safe set and Config.AllowedUnsafeSysctls,
// or one of a namespace it shares with the host (net.* with hostNetwork,
// IPC ones with hostIPC); OutOfpods when the node already runs MaxPods
// pods; OutOf<resource> when its requests do not fit in NodeResources
// beside the other pods, or it requests a resource the node does not have:
// huge pages (hugepages-2Mi), an extended resource (nvidia.com/gpu), a
// kubernetes.io/ or attachable-volumes-* resource (capacity 0).
//
// Start order (the StartGate, Deps.StartGate): a batch of new pods is
// admitted in the gate's Order, and an admitted pod waits at the gate until
// its Ready lets it go to its pod worker; the agent asks again on every
// batch, PLEG event, housekeeping pass and sync tick. FIFOStart, the
// default, is the kubelet's: oldest first, every pod at once.
//
// Ready is True only when the containers are ready and every readiness
// gate's condition (set in the pod's API status by someone else) is True;
// otherwise False with reason ReadinessGatesNotReady. ContainersReady does
// not look at the gates.
//
// Static pods: when a manifest is edited its pod gets a new UID; the new pod
// starts only once the old pod with the same name has stopped, so the two
// never run side by side (the kubelet's allowStaticPodStart).
//
// Restart safety: housekeeping does nothing until every source has sent its
// pods once and every update has been handled, so a restarted agent adopts
// the containers of its pods instead of stopping them as orphans.
//
// # A hung runtime
//
// The sync loop never calls the container runtime itself: housekeeping's
// listing, the container garbage collector (every ContainerGCPeriod) and
// the runtime status check (every RuntimeCheckPeriod, bounded by
// RuntimeCheckTimeout) each run on a goroutine of their own. While the
// runtime hangs, the loop keeps handling pod changes, PLEG events and probe
// results, and the "runtime" health check fails within RuntimeCheckPeriod +
// RuntimeCheckTimeout (7s by default); the check logs each transition once
// and signals HealthChanged, which the node status follows at once. The
// same status call gives the runtime's NetworkReady: false is no health
// check failure (the agent and host-network pods run on) but
// Agent.NetworkReady's "container runtime network not ready: ..." error,
// which nodekit adds to the node's Ready condition, as the kubelet does.
//
// # Concurrency
//
// The sync loop is one goroutine. Registry, StatusStore, Syncer and the
// health checks are safe for concurrent use: pod workers and the server call
// them from other goroutines.
//
// # Extending
//
// Add an admission.Handler to the "admission" value group, or decorate the
// admission.Chain or the StartGate, to change which pods run and when (see
// examples/admission-by-label and examples/priority-start). Replace the
// StatusStore to send statuses elsewhere (managers/status does,
// to the API server), the SyncHandler to change what a sync does, or any of
// the interfaces the Agent runs (PodConfig, pleg.Interface,
// podworkers.Workers) with fx.Decorate or fx.Replace: the Agent runs the
// values it is given, so a replaced default never starts.
package agent
