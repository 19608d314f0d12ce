// Package shutdown is the kubelet's graceful node shutdown: when the host
// announces that it is about to shut down, the node turns NotReady, new
// pods are refused, and the running pods are terminated in priority
// groups, lowest first, each within its share of the shutdown budget.
//
// # Data flow
//
// A Trigger announces imminent shutdowns (and their cancellation) and
// holds the shutdown back until Release, as the kubelet's "delay"
// inhibitor lock on systemd-logind does. Default.Run watches it; on an
// announcement it marks the node as shutting down (ShutdownStatus returns
// ErrShuttingDown, "node is shutting down", which the node status reports
// in the Ready condition; Admit refuses pods with reason NodeShutdown),
// signals Changed, records a NodeShutdown event on the node, then kills
// the active pods (PodLister) group by group through the PodKiller: the
// agent's pod workers, the path evictions take. Groups come from Config:
// GracePeriod and GracePeriodCriticalPods make two, the regular pods
// (priority below SystemCriticalPriority) with GracePeriod minus
// GracePeriodCriticalPods and the critical ones (system-cluster-critical
// and system-node-critical priorities) with GracePeriodCriticalPods;
// GracePeriodByPodPriority makes one per entry. As upstream, a pod
// belongs to the group of the highest priority not above its
// spec.priority (the lowest group if none); static pods count by their
// spec.priority like any other. Each pod gets the group's period, or its
// own terminationGracePeriodSeconds when shorter; the next group starts
// when every pod of this one has terminated or the group's period has
// passed. Each pod ends Failed (unless it had Succeeded) with reason
// Terminated, message "Pod was terminated in response to imminent node
// shutdown." and a DisruptionTarget condition (TerminationByKubelet).
// Then the Trigger is released. A cancellation clears the shutting-down
// state. The start and end of the last shutdown are the kubelet's gauges
// kubelet_graceful_shutdown_start_time_seconds and
// kubelet_graceful_shutdown_end_time_seconds, kept across restarts in
// StateFile under Config.StateDirectory.
//
// Logind is the default Trigger. nodekit has no D-Bus client, so it never
// takes logind's inhibitor lock: on a host without systemd-logind it
// reports ErrUnavailable naming the missing piece, and on one with logind
// it reports ErrUnavailable saying the D-Bus trigger is not built. Run
// logs that error and keeps the agent running: shutdown is then immediate,
// as the kubelet's without graceful shutdown.
//
// # Extending
//
// Supply another Trigger (a test's, a cloud's preemption notice, an
// orchestrator's drain signal) with fx.Decorate or fx.Replace, or give it
// to NewDefault.
//
// # Concurrency
//
// ShutdownStatus, Admit and Changed are safe for concurrent use; Run owns
// the shutdown sequence and is called once.
package shutdown
