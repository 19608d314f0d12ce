// Package stats reads the node's and its pods' resource usage: what the
// kubelet serves as /stats/summary (k8s.io/kubelet's stats/v1alpha1 types)
// and /metrics/resource, and what the eviction manager reads.
//
// # Place in the data flow
//
// The [Provider] interface is read by the HTTP server (package server serves
// [Provider.Summary] as /stats/summary, [ReadResourceMetrics] as
// /metrics/resource and, for a provider that is a [CadvisorSource] as [CRI]
// is, [CRI.ReadCadvisorMetrics] as /metrics/cadvisor: cadvisor's metric and
// label names computed from the same readings and the cgroups' limit files,
// without linking cadvisor) and by the eviction manager. The default, [CRI], asks
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
// Stats never fail node-wide for one pod: when ListPodSandboxStats fails
// for the whole list (containerd fails it when one sandbox has no cgroup
// parent), each pod is read with PodSandboxStats, and a pod whose call
// fails with ContainerStats per container. Such a pod is reported with what
// its containers and its cgroup give (no pod-level figures from the
// runtime), or left out when nothing of it can be read; every other pod
// and the node are reported as usual. Each failing pod is logged once, and
// again only when its error changes or after it recovered.
//
// What the runtime leaves empty is read from the cgroups when
// Config.CgroupRoot names the pod cgroups' root. On cgroup v1: cpuacct.usage;
// memory.usage_in_bytes, working set = usage - total_inactive_file as
// cadvisor computes it; pids.current. On cgroup v2: cpu.stat usage_usec;
// memory.current, working set = memory.current - memory.stat inactive_file;
// memory.max; pids.current (a pod's process count when the runtime gives
// none); io.stat; and, where the kernel has PSI, cpu.pressure,
// memory.pressure and io.pressure, whose figures go into CPUStats.PSI,
// MemoryStats.PSI and IOStats.PSI (totals converted from microseconds to
// the API's nanoseconds) of the node, the "pods" system container, each
// pod with a cgroup, and each container whose figures come from its cgroup.
// UsageNanoCores, when the runtime leaves it empty (and
// always for the node and the "pods" system container), is the average over
// the last interval of at least 10 s between readings of either mode (the
// kubelet's housekeeping interval; closer readings repeat the last rate, and
// a reading older than 10 minutes is not used). The node's figures come from the
// host: the root cgroup for CPU and memory (on cgroup v2, whose root has no
// memory.current, usage = memory.stat anon + file and working set = usage -
// inactive_file, as runc's cgroup library gives cadvisor; /proc/meminfo on
// a kernel whose v2 root has no memory.stat), /proc/meminfo for capacity,
// statfs of Config.RootDir (nodefs), /proc/sys/kernel/{pid_max,threads-max}
// and /proc/loadavg for the pid limit, /proc/net/dev for interfaces, and the
// boot time as the node's start time. Container logs are measured (as du
// does) under Config.PodLogsDir, where the CRI manager writes them.
//
// Pods' volume stats (PodStats.VolumeStats) list the volumes a
// [VolumeLister] names (given with [CRI.SetVolumes]; nodekit gives the
// volume manager): du's used bytes and inodes under each volume's
// directory and statfs of its filesystem, as the kubelet's MetricsDu,
// measured at most once per Config.VolumeStatsAggPeriod. They count in the
// pod's ephemeral storage with its containers' writable layers and logs.
//
// Not read: accelerators, swap (unless the runtime reports it), PSI on
// cgroup v1 (the kernel has it only on v2) and the "kubelet" and "runtime"
// system containers. The cgroup v2 path is tested against files in the
// kernel's formats (testdata/cgroupv2), not on real v2 controllers.
//
// # Extending and replacing
//
// Implement [Provider] (three methods) and provide it in place of [Module];
// the server and the eviction manager read only the interface.
//
// # Concurrency
//
// [CRI]'s methods are safe for concurrent use; each call reads afresh. The
// CPU cache behind UsageNanoCores is updated by readings of both modes, so
// that CPU-and-memory-only scrapes alone (metrics-server's, with nothing
// taking full summaries) still see a recent rate; every pod list drops the
// readings of the pods and containers it no longer names, and every full
// one the volume measurements of the volumes it no longer lists.
package stats
