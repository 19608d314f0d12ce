package stats

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

var _ Provider = (*CRI)(nil)

// Keys of the node-level entries in the CPU cache (container and sandbox
// IDs are 64 hex digits, so they never collide).
const (
	nodeCPUKey = "node"
	podsCPUKey = "system:pods"
)

// CRI is the default Provider: pod and container stats from the runtime's
// CRI stats calls (ListPodSandboxStats, ListContainerStats, ImageFsInfo),
// with what the runtime leaves empty read from the pod and container
// cgroups, and the node's figures from the host (root cgroup, procfs,
// statfs). Its methods are safe for concurrent use.
type CRI struct {
	rs       criapi.RuntimeService
	is       criapi.ImageManagerService
	clk      clock.Clock
	log      logr.Logger
	cfg      Config
	host     host
	cgroups  cgroupReader
	cpu      *cpuCache
	volumes  volumeCache
	failures *failureLog
}

// NewCRI returns the CRI stats provider. It does no I/O.
func NewCRI(rs criapi.RuntimeService, is criapi.ImageManagerService, clk clock.Clock, log logr.Logger, cfg Config) *CRI {
	cfg = cfg.withDefaults()
	cg := cgroupReader{root: cfg.CgroupfsRoot}
	return &CRI{
		rs: rs, is: is, clk: clk, log: log.WithName("stats"), cfg: cfg,
		host: host{proc: cfg.ProcRoot, sys: "/sys", cgroups: cg}, cgroups: cg, cpu: newCPUCache(),
		volumes:  volumeCache{entries: map[volumeKey]statsapi.FsStats{}},
		failures: &failureLog{last: map[string]string{}},
	}
}

// Summary implements Provider.
func (p *CRI) Summary(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.Summary, error) {
	node, err := p.NodeStats(ctx, onlyCPUAndMemory)
	if err != nil {
		return nil, err
	}
	pods, err := p.ListPodStats(ctx, onlyCPUAndMemory)
	if err != nil {
		return nil, err
	}
	return &statsapi.Summary{Node: *node, Pods: pods}, nil
}

// NodeStats implements Provider. CPU and memory come from the root cgroup
// (the working set is usage - inactive_file; available is MemTotal - the
// working set), with, on cgroup v2 where the kernel has PSI, the root's
// cpu, memory and io pressure (the last as IO), the start time is the boot time; the full form adds the
// root directory's filesystem (nodefs), the image filesystem from
// ImageFsInfo, the pid limit and process count, the host's interfaces and,
// with pod cgroups, the "pods" system container.
func (p *CRI) NodeStats(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.NodeStats, error) {
	now := p.clk.Now()
	boot, err := p.host.bootTime()
	if err != nil {
		return nil, fmt.Errorf("node start time: %w", err)
	}
	cg, capacity, err := p.host.nodeCgroup()
	if err != nil {
		return nil, fmt.Errorf("node cpu and memory: %w", err)
	}
	ns := &statsapi.NodeStats{
		NodeName:  p.cfg.NodeName,
		StartTime: metav1.NewTime(boot),
		CPU:       p.cgroupCPU(nodeCPUKey, now, cg),
		Memory:    cgroupMemory(now, cg, capacity),
		IO:        cgroupIO(now, cg),
	}
	if sc := p.podsContainer(now, boot); sc != nil {
		ns.SystemContainers = []statsapi.ContainerStats{*sc}
	}
	if onlyCPUAndMemory {
		return ns, nil
	}
	if ns.Fs, err = fsStats(p.cfg.RootDir, now); err != nil {
		return nil, fmt.Errorf("node filesystem: %w", err)
	}
	if ns.Runtime, err = p.runtimeFs(ctx, now); err != nil {
		return nil, err
	}
	ns.Rlimit = p.host.rlimit(now)
	if ns.Network, err = p.host.network(now); err != nil {
		p.log.V(4).Info("no node network stats", "err", err.Error())
	}
	return ns, nil
}

// podsContainer is the "pods" system container: the cgroup that holds every
// pod (CgroupRoot/kubepods), nil without pod cgroups.
func (p *CRI) podsContainer(now, boot time.Time) *statsapi.ContainerStats {
	if p.cfg.CgroupRoot == "" {
		return nil
	}
	path := filepath.Join("/", p.cfg.CgroupRoot, "kubepods")
	cg, err := p.cgroups.read(path)
	if err != nil {
		p.log.V(4).Info("no pods cgroup stats", "cgroup", path, "err", err.Error())
		return nil
	}
	return &statsapi.ContainerStats{
		Name:      statsapi.SystemContainerPods,
		StartTime: metav1.NewTime(boot),
		CPU:       p.cgroupCPU(podsCPUKey, now, cg),
		Memory:    cgroupMemory(now, cg, 0),
		IO:        cgroupIO(now, cg),
	}
}

// runtimeFs is the image filesystem from ImageFsInfo: the runtime's usage,
// with capacity and free space from statfs of its mount point. The
// container filesystem is the image filesystem unless the runtime names a
// separate one.
func (p *CRI) runtimeFs(ctx context.Context, now time.Time) (*statsapi.RuntimeStats, error) {
	resp, err := p.is.ImageFsInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("image filesystem info: %w", err)
	}
	rt := &statsapi.RuntimeStats{}
	if fs := resp.GetImageFilesystems(); len(fs) > 0 {
		rt.ImageFs = p.criFs(fs[0], now)
	}
	rt.ContainerFs = rt.ImageFs
	if fs := resp.GetContainerFilesystems(); len(fs) > 0 {
		rt.ContainerFs = p.criFs(fs[0], now)
	}
	return rt, nil
}

// criFs turns a CRI FilesystemUsage into FsStats, adding statfs of its
// mount point.
func (p *CRI) criFs(u *runtimeapi.FilesystemUsage, now time.Time) *statsapi.FsStats {
	fs := &statsapi.FsStats{Time: metav1.NewTime(now)}
	if mp := u.GetFsId().GetMountpoint(); mp != "" {
		if st, err := fsStats(mp, now); err == nil {
			fs = st
		} else {
			p.log.V(4).Info("cannot statfs the image filesystem", "mountpoint", mp, "err", err.Error())
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

// cgroupCPU turns a cgroup reading into CPUStats, with UsageNanoCores from
// the readings under key.
func (p *CRI) cgroupCPU(key string, now time.Time, cg cgroupStats) *statsapi.CPUStats {
	return &statsapi.CPUStats{
		Time:                 metav1.NewTime(now),
		UsageCoreNanoSeconds: ptr(cg.cpuUsageNanos),
		UsageNanoCores:       p.cpu.nanoCores(key, now, cg.cpuUsageNanos),
		PSI:                  cg.cpuPSI,
	}
}

// cgroupIO is the cgroup's io pressure as IOStats; nil without PSI.
func cgroupIO(now time.Time, cg cgroupStats) *statsapi.IOStats {
	if cg.ioPSI == nil {
		return nil
	}
	return &statsapi.IOStats{Time: metav1.NewTime(now), PSI: cg.ioPSI}
}

// cgroupMemory turns a cgroup reading into MemoryStats. Available is the
// limit (the cgroup's, else capacity when non-zero) minus the working set,
// left out when there is neither.
func cgroupMemory(now time.Time, cg cgroupStats, capacity uint64) *statsapi.MemoryStats {
	m := &statsapi.MemoryStats{
		Time:            metav1.NewTime(now),
		UsageBytes:      ptr(cg.memUsage),
		WorkingSetBytes: ptr(cg.workingSet),
		RSSBytes:        ptr(cg.rss),
		PageFaults:      ptr(cg.pageFaults),
		MajorPageFaults: ptr(cg.majorPageFaults),
		PSI:             cg.memoryPSI,
	}
	limit := cg.limit
	if limit == 0 || (capacity > 0 && capacity < limit) {
		limit = capacity
	}
	if limit > 0 {
		m.AvailableBytes = ptr(sub(limit, cg.workingSet))
	}
	return m
}

// instanceSelector limits CRI lists to this agent's objects.
func (p *CRI) instanceSelector() map[string]string {
	if p.cfg.InstanceID == "" {
		return nil
	}
	return map[string]string{noderuntime.LabelInstance: p.cfg.InstanceID}
}

// podLogDir is where the CRI manager puts a pod's container logs.
func (p *CRI) podLogDir(ref statsapi.PodReference) string {
	return filepath.Join(p.cfg.PodLogsDir, ref.Namespace+"_"+ref.Name+"_"+ref.UID)
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
