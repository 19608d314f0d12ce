// Package eviction holds the kubelet's eviction decisions: the signals,
// the thresholds, when they act, and which pod goes first.
//
// # Data flow
//
// Observe turns the stats provider's NodeStats into the kubelet's signals
// (memory.available from the root cgroup's working set, nodefs and
// imagefs available bytes and free inodes, pid.available). A Monitor,
// given the thresholds of --eviction-hard and --eviction-soft (parsed by
// ParseThresholds and HardThresholds), decides at each pass which
// thresholds are met (with minimum reclaim for those not yet resolved),
// which have held for their grace period and so call for reclaim (memory
// first), and which pressure conditions hold (MemoryPressure,
// DiskPressure, PIDPressure, kept for the transition period). A Ranker
// orders the pods to evict for a signal; KubeletRanker is the kubelet's
// order. Message and Reason are what an evicted pod's status says.
// ReservedFor is what the hard thresholds take out of allocatable.
//
// Default is the manager: every 10s (Synchronize) it reads the stats,
// updates the conditions and, for the first threshold that calls for
// reclaim, frees node-level resources when the signal is a disk one (dead
// containers and sandboxes through a ContainerGC, the agent's, then unused
// images through a Reclaimer, the image GC, unless the signal is nodefs
// and the image filesystem is another one) and, if that was not enough,
// evicts the first
// non-critical pod in rank order (one per pass) through a PodKiller: 1s
// grace for a hard threshold, the pod's own bounded by
// MaxPodGracePeriodSeconds for a soft one; the pod ends Failed, reason
// Evicted, with the kubelet's message, a DisruptionTarget condition and
// an Evicted Warning event. Static, mirror and system-critical pods are
// never evicted.
//
// # Extending
//
// Ranker is the policy slot: replace KubeletRanker with any order.
//
// # Concurrency
//
// The functions are pure; a Monitor is not safe for concurrent use (one
// monitoring loop owns it); Default's Conditions is safe for concurrent
// use, Synchronize is called by Run only.
package eviction
