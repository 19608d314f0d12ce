package stats

import (
	"cmp"
	"path/filepath"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// criCPU converts the runtime's CPU usage. UsageNanoCores is the
// runtime's when it gives one (containerd 2 does; the cache is then left
// alone), else computed from the readings under key. nil when the
// runtime gave no cumulative usage.
func (p *CRI) criCPU(key string, u *runtimeapi.CpuUsage, r *round) *statsapi.CPUStats {
	if u.GetUsageCoreNanoSeconds() == nil {
		return nil
	}
	at := r.now
	if u.GetTimestamp() > 0 {
		at = time.Unix(0, u.GetTimestamp())
	}
	usage := u.GetUsageCoreNanoSeconds().GetValue()
	cpu := &statsapi.CPUStats{Time: metav1.NewTime(at), UsageCoreNanoSeconds: ptr(usage)}
	if n := u.GetUsageNanoCores(); n != nil {
		cpu.UsageNanoCores = ptr(n.GetValue())
	} else {
		cpu.UsageNanoCores = p.cpu.nanoCores(key, at, usage)
	}
	return cpu
}

// criMemory converts the runtime's memory usage; nil without a working set.
func criMemory(u *runtimeapi.MemoryUsage) *statsapi.MemoryStats {
	if u.GetWorkingSetBytes() == nil {
		return nil
	}
	m := &statsapi.MemoryStats{
		Time:            metav1.NewTime(time.Unix(0, u.GetTimestamp())),
		WorkingSetBytes: ptr(u.GetWorkingSetBytes().GetValue()),
	}
	for _, f := range []struct {
		v   *runtimeapi.UInt64Value
		dst **uint64
	}{
		{u.GetAvailableBytes(), &m.AvailableBytes}, {u.GetUsageBytes(), &m.UsageBytes},
		{u.GetRssBytes(), &m.RSSBytes}, {u.GetPageFaults(), &m.PageFaults},
		{u.GetMajorPageFaults(), &m.MajorPageFaults},
	} {
		if f.v != nil {
			*f.dst = ptr(f.v.GetValue())
		}
	}
	return m
}

// criNetwork converts the pod's network usage; nil when the runtime gave
// none.
func criNetwork(u *runtimeapi.NetworkUsage) *statsapi.NetworkStats {
	if u == nil {
		return nil
	}
	n := &statsapi.NetworkStats{Time: metav1.NewTime(time.Unix(0, u.GetTimestamp()))}
	conv := func(i *runtimeapi.NetworkInterfaceUsage) statsapi.InterfaceStats {
		is := statsapi.InterfaceStats{Name: i.GetName()}
		for _, f := range []struct {
			v   *runtimeapi.UInt64Value
			dst **uint64
		}{
			{i.GetRxBytes(), &is.RxBytes}, {i.GetRxErrors(), &is.RxErrors},
			{i.GetTxBytes(), &is.TxBytes}, {i.GetTxErrors(), &is.TxErrors},
		} {
			if f.v != nil {
				*f.dst = ptr(f.v.GetValue())
			}
		}
		return is
	}
	if d := u.GetDefaultInterface(); d != nil {
		n.InterfaceStats = conv(d)
	}
	for _, i := range u.GetInterfaces() {
		n.Interfaces = append(n.Interfaces, conv(i))
	}
	return n
}

// rootfs is the container's writable layer: the runtime's usage, with the
// capacity and free space of the filesystem it is on.
func (p *CRI) rootfs(u *runtimeapi.FilesystemUsage, r *round) *statsapi.FsStats {
	if u == nil {
		return nil
	}
	fs := &statsapi.FsStats{Time: metav1.NewTime(r.now)}
	if mp := u.GetFsId().GetMountpoint(); mp != "" {
		st, ok := r.fsByMount[mp]
		if !ok {
			var err error
			if st, err = fsStats(mp, r.now); err != nil {
				p.log.V(4).Info("cannot statfs a writable layer's filesystem", "mountpoint", mp, "err", err.Error())
			}
			r.fsByMount[mp] = st
		}
		if st != nil {
			fs.CapacityBytes, fs.AvailableBytes, fs.Inodes, fs.InodesFree = st.CapacityBytes, st.AvailableBytes, st.Inodes, st.InodesFree
		}
	}
	if u.GetTimestamp() > 0 {
		fs.Time = metav1.NewTime(time.Unix(0, u.GetTimestamp()))
	}
	if v := u.GetUsedBytes(); v != nil {
		fs.UsedBytes = ptr(v.GetValue())
	}
	if v := u.GetInodesUsed(); v != nil {
		fs.InodesUsed = ptr(v.GetValue())
	}
	return fs
}

// logStats is what the container's log directory (its current and rotated
// logs) takes on the node's filesystem.
func (p *CRI) logStats(ref statsapi.PodReference, container string, r *round) *statsapi.FsStats {
	dir := filepath.Join(p.podLogDir(ref), container)
	used, inodes, err := diskUsage(dir)
	if err != nil {
		p.log.V(4).Info("cannot measure container logs", "dir", dir, "err", err.Error())
		return nil
	}
	fs := &statsapi.FsStats{Time: metav1.NewTime(r.now), UsedBytes: ptr(used), InodesUsed: ptr(inodes)}
	fs.CapacityBytes, fs.AvailableBytes, fs.Inodes, fs.InodesFree = r.nodefs.CapacityBytes, r.nodefs.AvailableBytes, r.nodefs.Inodes, r.nodefs.InodesFree
	return fs
}

// ephemeralStorage is the pod's use of local storage: its containers'
// writable layers and logs and its volumes (all of them ephemeral: nodekit
// has no persistent volumes), on the node's filesystem, as the kubelet's
// calcEphemeralStorage.
func ephemeralStorage(containers []statsapi.ContainerStats, volumes []statsapi.VolumeStats, r *round) *statsapi.FsStats {
	fs := &statsapi.FsStats{Time: metav1.NewTime(r.now), UsedBytes: ptr(uint64(0)), InodesUsed: ptr(uint64(0))}
	fs.CapacityBytes, fs.AvailableBytes, fs.Inodes, fs.InodesFree = r.nodefs.CapacityBytes, r.nodefs.AvailableBytes, r.nodefs.Inodes, r.nodefs.InodesFree
	add := func(part *statsapi.FsStats) {
		if part == nil {
			return
		}
		if part.UsedBytes != nil {
			*fs.UsedBytes += *part.UsedBytes
		}
		if part.InodesUsed != nil {
			*fs.InodesUsed += *part.InodesUsed
		}
	}
	for _, c := range containers {
		add(c.Rootfs)
		add(c.Logs)
	}
	for i := range volumes {
		add(&volumes[i].FsStats)
	}
	return fs
}

// removeTerminatedPods keeps, of the sandboxes of one pod (namespace, name
// and UID), the latest ready one, or the latest when none is ready.
func removeTerminatedPods(sandboxes []*runtimeapi.PodSandbox) []*runtimeapi.PodSandbox {
	type key struct{ ns, name, uid string }
	groups := map[key][]*runtimeapi.PodSandbox{}
	for _, sb := range sandboxes {
		md := sb.GetMetadata()
		k := key{md.GetNamespace(), md.GetName(), md.GetUid()}
		groups[k] = append(groups[k], sb)
	}
	out := make([]*runtimeapi.PodSandbox, 0, len(groups))
	for _, g := range groups {
		slices.SortFunc(g, func(a, b *runtimeapi.PodSandbox) int { return cmp.Compare(a.GetCreatedAt(), b.GetCreatedAt()) })
		pick := g[len(g)-1]
		for i := len(g) - 1; i >= 0; i-- {
			if g[i].GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
				pick = g[i]
				break
			}
		}
		out = append(out, pick)
	}
	return out
}

// removeTerminatedContainers keeps, of the instances of one container
// (sandbox and name), the running ones, or the latest when none runs.
func removeTerminatedContainers(containers []*runtimeapi.Container) []*runtimeapi.Container {
	type key struct{ sandbox, name string }
	groups := map[key][]*runtimeapi.Container{}
	for _, c := range containers {
		k := key{c.GetPodSandboxId(), c.GetMetadata().GetName()}
		groups[k] = append(groups[k], c)
	}
	out := make([]*runtimeapi.Container, 0, len(containers))
	for _, g := range groups {
		slices.SortFunc(g, func(a, b *runtimeapi.Container) int { return cmp.Compare(a.GetCreatedAt(), b.GetCreatedAt()) })
		running := false
		for _, c := range g {
			if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
				out = append(out, c)
				running = true
			}
		}
		if !running {
			out = append(out, g[len(g)-1])
		}
	}
	return out
}
