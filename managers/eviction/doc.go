// Package eviction holds the kubelet's eviction signals and thresholds.
//
// This first part is the threshold language of --eviction-hard and
// --eviction-soft ("memory.available<100Mi,nodefs.available<10%"), with
// the kubelet's defaults, and what the hard thresholds take out of the
// node's allocatable resources (ReservedFor). The monitoring loop, pod
// ranking and node conditions are not built yet.
//
// Everything here is pure and safe for concurrent use.
package eviction
