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
// The monitoring loop that reads stats every 10s, reclaims node-level
// resources and evicts pods is not built yet.
//
// # Extending
//
// Ranker is the policy slot: replace KubeletRanker with any order.
//
// # Concurrency
//
// The functions are pure; a Monitor is not safe for concurrent use (one
// monitoring loop owns it).
package eviction
