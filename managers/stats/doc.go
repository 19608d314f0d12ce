// Package stats reads the node's and its pods' resource usage: what the
// kubelet serves as /stats/summary (k8s.io/kubelet's stats/v1alpha1 types)
// and /metrics/resource, and what the eviction manager reads.
//
// # Place in the data flow
//
// The [Provider] interface is read by the HTTP server (package server serves
// [Provider.Summary] as /stats/summary and [ReadResourceMetrics] as
// /metrics/resource) and by the eviction manager. The default, [CRI], asks
// the container runtime over CRI:
//
//   - ListPodSandbox and ListContainers name the pods and containers (only
//     this agent's, by the instance label, when Config.InstanceID is set;
//     terminated instances are dropped as the kubelet drops them);
//   - ListPodSandboxStats gives pod and container CPU, memory, network,
//     process count and writable-layer usage (containerd 2.4 fills all of
//     these, including UsageNanoCores, but no swap, IO or PSI); a runtime
//     that does not implement it gets ListContainerStats;
//   - ImageFsInfo gives the image filesystem's usage; its capacity and
//     free space come from statfs of the mount point it names.
//
// What the runtime leaves empty is read from the cgroups (cgroup v1:
// cpuacct.usage; memory.usage_in_bytes, working set = usage -
// total_inactive_file as cadvisor computes it; cgroup v2: cpu.stat and
// memory.current / memory.stat) when Config.CgroupRoot names the pod
// cgroups' root. UsageNanoCores, when the runtime leaves it empty, is the
// average since the previous full reading. The node's figures come from the
// host: the root cgroup for CPU and memory, /proc/meminfo for capacity,
// statfs of Config.RootDir (nodefs), /proc/sys/kernel/{pid_max,threads-max}
// and /proc/loadavg for the pid limit, /proc/net/dev for interfaces, and the
// boot time as the node's start time. Container logs are measured (as du
// does) under RootDir/logs, where the CRI manager writes them.
//
// Not read: volume stats (PodStats.VolumeStats stays empty, and a pod's
// ephemeral storage counts only its containers' writable layers and logs),
// accelerators, PSI, swap (unless the runtime reports it) and the
// "kubelet" and "runtime" system containers.
//
// # Extending and replacing
//
// Implement [Provider] (three methods) and provide it in place of [Module];
// the server and the eviction manager read only the interface.
//
// # Concurrency
//
// [CRI]'s methods are safe for concurrent use; each call reads afresh. The
// CPU cache behind UsageNanoCores is updated by full readings only, so that
// CPU-and-memory-only scrapes (metrics-server's) do not shrink the window
// the full summary averages over, as in the kubelet.
package stats
