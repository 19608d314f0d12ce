// Package runtime is the agent's view of a container runtime: the Runtime
// interface, the runtime-neutral types it speaks (Pod, PodStatus,
// SyncResult, VersionInfo, RuntimeStatus) and the labels nodekit puts on
// sandboxes and containers. It imports no CRI types, so a runtime that is
// not a CRI client can implement it.
//
// # Data flow
//
// The pod workers' SyncHandler (agent.Syncer) calls SyncPod to make a pod
// run as its spec says and KillPod to stop it; the PLEG calls GetPods and
// GetPodStatus to see what changed; housekeeping lists pods to find
// orphans. runtime/cri is the default implementation (a CRI client of
// containerd or CRI-O: computePodActions decides, SyncPod and KillPod act);
// runtime/sim is a simulated CRI server for tests and experiments, used
// through runtime/cri.
//
// # Optional capabilities
//
// Small interfaces a Runtime may also implement, found by type assertion,
// so adding one never breaks an implementation: GarbageCollector
// (container GC, run by the agent), EventAware (where the Pulled, Created,
// Started, Killing events go: an EventRecorder), VolumeAware and
// VolumeGetter (the host paths of pod volumes), ProbeAware, LivenessAware,
// StartupResults and PreStopRunner (probes and hooks), and Streamer,
// CommandRunner and LogReader (exec, attach, port-forward and logs for the
// server).
//
// # Extending
//
// Provide another Runtime with fx.Decorate or fx.Replace of
// runtime.Runtime, or leave cri.Module out and provide one; the agent, the
// PLEG and the pod workers use whatever Runtime the application holds.
// Under nodekit.New a Runtime's constructor asks for what it uses: the
// application provides an EventRecorder, a VolumeGetter, StartupResults and
// LivenessResults (the prober's), a nodeip.Source and, for runtime/cri, a
// cri.EnvSource, cri.SecretGetter and cri.RuntimeClassGetter (as
// cri.Module's constructor takes them); nothing calls the Set methods of
// the capabilities after construction.
//
// # Concurrency
//
// Implementations must be safe for concurrent use: every pod worker, the
// PLEG and housekeeping call them from their own goroutines. The returned
// objects belong to the caller.
package runtime
