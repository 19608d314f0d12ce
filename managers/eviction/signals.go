package eviction

import (
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Observation is one signal's reading: what is available of what capacity.
type Observation struct {
	Available int64
	Capacity  int64
}

// Observations are the signals read in one monitoring pass.
type Observations map[Signal]Observation

// Observe computes the signals from the node's stats as the kubelet does:
// memory.available is the root cgroup's available bytes (capacity less
// its working set), its capacity available plus working set; nodefs from
// the node's filesystem (the root dir's), imagefs from the runtime's image
// filesystem; pid.available is the pid limit less the processes. A signal
// whose stats are missing is left out.
func Observe(node *statsapi.NodeStats) Observations {
	out := Observations{}
	if node == nil {
		return out
	}
	if m := node.Memory; m != nil && m.AvailableBytes != nil && m.WorkingSetBytes != nil {
		out[SignalMemoryAvailable] = Observation{
			Available: int64(*m.AvailableBytes), Capacity: int64(*m.AvailableBytes + *m.WorkingSetBytes)}
	}
	fs := func(f *statsapi.FsStats, bytes, inodes Signal) {
		if f == nil {
			return
		}
		if f.AvailableBytes != nil && f.CapacityBytes != nil {
			out[bytes] = Observation{Available: int64(*f.AvailableBytes), Capacity: int64(*f.CapacityBytes)}
		}
		if f.InodesFree != nil && f.Inodes != nil {
			out[inodes] = Observation{Available: int64(*f.InodesFree), Capacity: int64(*f.Inodes)}
		}
	}
	fs(node.Fs, SignalNodeFsAvailable, SignalNodeFsInodesFree)
	if node.Runtime != nil {
		fs(node.Runtime.ImageFs, SignalImageFsAvailable, SignalImageFsInodesFree)
	}
	if r := node.Rlimit; r != nil && r.MaxPID != nil && r.NumOfRunningProcesses != nil {
		out[SignalPIDAvailable] = Observation{Available: *r.MaxPID - *r.NumOfRunningProcesses, Capacity: *r.MaxPID}
	}
	return out
}
