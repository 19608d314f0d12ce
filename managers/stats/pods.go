package stats

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// podInput is what one pod's stats are built from.
type podInput struct {
	sandbox    *runtimeapi.PodSandbox
	containers []*runtimeapi.Container
	stats      *runtimeapi.PodSandboxStats // nil when the runtime gave none
	// failed is set when the pod's own stats call failed: the pod is then
	// left out unless something of it was measured.
	failed bool
	// cgroup is the pod's cgroup ("" when not known), result its stats and
	// mounts the mount points of its containers' writable layers, by
	// container ID (full reads only); podStats sets them and cg.
	cgroup string
	result statsapi.PodStats
	mounts map[string]string
	// cg is the pod cgroup's reading, nil when not read.
	cg *cgroupStats
}

// round is one ListPodStats call's shared state.
type round struct {
	now       time.Time
	only      bool
	cstats    map[string]*runtimeapi.ContainerStats
	fsByMount map[string]*statsapi.FsStats
	nodefs    *statsapi.FsStats
	seen      map[string]bool
	volumes   map[volumeKey]bool // the pod volumes measured
}

// ListPodStats implements Provider. It reports the pods whose sandbox is
// ready, with, per pod name, the latest sandbox only; per container name,
// the running instance (or the latest when none runs), as the kubelet's
// CRI stats provider does. Pod stats come from ListPodSandboxStats; a
// runtime that does not implement it (containerd 1.6) gets
// ListContainerStats and the pod cgroups instead. When the list call fails,
// each pod is read on its own (see runtimeStats): a pod whose stats cannot
// be read is reported from its containers' and its cgroup's, or left out
// when none of them gives anything, and the others are unaffected. Pods are
// sorted by namespace and name, containers by name.
func (p *CRI) ListPodStats(ctx context.Context, onlyCPUAndMemory bool) ([]statsapi.PodStats, error) {
	pods, err := p.listPods(ctx, onlyCPUAndMemory)
	if err != nil {
		return nil, err
	}
	out := make([]statsapi.PodStats, len(pods))
	for i, in := range pods {
		out[i] = in.result
	}
	return out, nil
}

// listPods is ListPodStats with each pod's input (its sandbox, containers
// and cgroup) beside its stats.
func (p *CRI) listPods(ctx context.Context, onlyCPUAndMemory bool) ([]*podInput, error) {
	sel := p.instanceSelector()
	sandboxes, err := p.rs.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list pod sandboxes: %w", err)
	}
	containers, err := p.rs.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	r := &round{now: p.clk.Now(), only: onlyCPUAndMemory, seen: map[string]bool{nodeCPUKey: true, podsCPUKey: true},
		volumes: map[volumeKey]bool{}}
	inputs := map[string]*podInput{}
	for _, sb := range removeTerminatedPods(sandboxes) {
		if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY && sb.GetMetadata() != nil {
			inputs[sb.GetId()] = &podInput{sandbox: sb}
		}
	}
	for _, c := range removeTerminatedContainers(containers) {
		if in := inputs[c.GetPodSandboxId()]; in != nil && c.GetMetadata() != nil {
			in.containers = append(in.containers, c)
		}
	}
	if err := p.runtimeStats(ctx, sel, inputs, r); err != nil {
		return nil, err
	}
	if !onlyCPUAndMemory {
		if r.nodefs, err = fsStats(p.cfg.RootDir, r.now); err != nil {
			return nil, fmt.Errorf("node filesystem: %w", err)
		}
		r.fsByMount = map[string]*statsapi.FsStats{}
	}
	out := make([]*podInput, 0, len(inputs))
	for _, in := range inputs {
		in.result = p.podStats(in, r)
		if in.failed && !measured(in.result) {
			continue
		}
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b *podInput) int {
		return cmp.Or(cmp.Compare(a.result.PodRef.Namespace, b.result.PodRef.Namespace), cmp.Compare(a.result.PodRef.Name, b.result.PodRef.Name))
	})
	p.cpu.prune(r.seen)
	p.failures.prune(inputs)
	if !onlyCPUAndMemory {
		p.pruneVolumes(r.volumes)
	}
	return out, nil
}

// podStats builds one pod's stats.
func (p *CRI) podStats(in *podInput, r *round) statsapi.PodStats {
	md := in.sandbox.GetMetadata()
	ps := statsapi.PodStats{
		PodRef:     statsapi.PodReference{Name: md.GetName(), Namespace: md.GetNamespace(), UID: md.GetUid()},
		StartTime:  metav1.NewTime(time.Unix(0, in.sandbox.GetCreatedAt())),
		Containers: make([]statsapi.ContainerStats, 0, len(in.containers)),
	}
	byID := map[string]*runtimeapi.ContainerStats{}
	for _, s := range in.stats.GetLinux().GetContainers() {
		byID[s.GetAttributes().GetId()] = s
	}
	podCgroup := p.podCgroup(ps.PodRef.UID)
	in.cgroup = podCgroup
	for _, c := range in.containers {
		s := byID[c.GetId()]
		if s == nil {
			s = r.cstats[c.GetId()]
		}
		ps.Containers = append(ps.Containers, p.containerStats(c, s, podCgroup, ps.PodRef, r))
		if mp := s.GetWritableLayer().GetFsId().GetMountpoint(); mp != "" {
			if in.mounts == nil {
				in.mounts = map[string]string{}
			}
			in.mounts[c.GetId()] = mp
		}
	}
	slices.SortFunc(ps.Containers, func(a, b statsapi.ContainerStats) int { return cmp.Compare(a.Name, b.Name) })

	linux := in.stats.GetLinux()
	id := in.sandbox.GetId()
	r.seen[id] = true
	ps.CPU = p.criCPU(id, linux.GetCpu(), r)
	ps.Memory = criMemory(linux.GetMemory())
	cg := p.readCgroup(podCgroup)
	in.cg = cg
	if cg != nil {
		p.fill(id, cg, &ps.CPU, &ps.Memory, r)
		addPSI(cg, ps.CPU, ps.Memory)
		ps.IO = cgroupIO(r.now, *cg)
	}
	if r.only {
		return ps
	}
	ps.Network = criNetwork(linux.GetNetwork())
	if n := linux.GetProcess().GetProcessCount(); n != nil {
		ps.ProcessStats = &statsapi.ProcessStats{ProcessCount: ptr(n.GetValue())}
	} else if cg != nil && cg.pids != nil {
		ps.ProcessStats = &statsapi.ProcessStats{ProcessCount: ptr(*cg.pids)}
	}
	ps.VolumeStats = p.volumeStats(ps.PodRef.UID, r.volumes, r.now)
	ps.EphemeralStorage = ephemeralStorage(ps.Containers, ps.VolumeStats, r)
	return ps
}

// containerStats builds one container's stats from the runtime's s (nil
// when it gave none), filled in from the container's cgroup.
func (p *CRI) containerStats(c *runtimeapi.Container, s *runtimeapi.ContainerStats, podCgroup string, ref statsapi.PodReference, r *round) statsapi.ContainerStats {
	r.seen[c.GetId()] = true
	cs := statsapi.ContainerStats{
		Name:      c.GetMetadata().GetName(),
		StartTime: metav1.NewTime(time.Unix(0, c.GetCreatedAt())),
		CPU:       p.criCPU(c.GetId(), s.GetCpu(), r),
		Memory:    criMemory(s.GetMemory()),
	}
	if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING && podCgroup != "" {
		p.fillFromCgroup(c.GetId(), filepath.Join(podCgroup, c.GetId()), &cs.CPU, &cs.Memory, r)
	}
	if r.only {
		return cs
	}
	cs.Rootfs = p.rootfs(s.GetWritableLayer(), r)
	cs.Logs = p.logStats(ref, cs.Name, r)
	return cs
}

// podCgroup finds the pod's cgroup under CgroupRoot, whatever its QoS
// class: "" without pod cgroups or when none exists.
func (p *CRI) podCgroup(uid string) string {
	if p.cfg.CgroupRoot == "" || uid == "" {
		return ""
	}
	base := filepath.Join("/", p.cfg.CgroupRoot, "kubepods")
	hier := filepath.Join(p.cfg.CgroupfsRoot, "memory")
	if p.cgroups.v2() {
		hier = p.cfg.CgroupfsRoot
	}
	for _, dir := range []string{base, filepath.Join(base, "burstable"), filepath.Join(base, "besteffort")} {
		path := filepath.Join(dir, "pod"+uid)
		if exists(filepath.Join(hier, path)) {
			return path
		}
	}
	return ""
}

// fillFromCgroup reads the cgroup at path when the runtime left CPU usage
// or the memory working set empty, and fills what is missing (with the
// cgroup's PSI, read with them).
func (p *CRI) fillFromCgroup(key, path string, cpu **statsapi.CPUStats, mem **statsapi.MemoryStats, r *round) {
	cpuMissing := *cpu == nil || (*cpu).UsageCoreNanoSeconds == nil
	memMissing := *mem == nil || (*mem).WorkingSetBytes == nil
	if !cpuMissing && !memMissing {
		return
	}
	if cg := p.readCgroup(path); cg != nil {
		p.fill(key, cg, cpu, mem, r)
	}
}

// readCgroup reads the cgroup at path; nil for "" or when it cannot be
// read (logged at V(4): a pod's cgroup goes away with it).
func (p *CRI) readCgroup(path string) *cgroupStats {
	if path == "" {
		return nil
	}
	cg, err := p.cgroups.read(path)
	if err != nil {
		p.log.V(4).Info("cannot read cgroup stats", "cgroup", path, "err", err.Error())
		return nil
	}
	return &cg
}

// fill sets the CPU and memory stats the runtime left empty from cg.
func (p *CRI) fill(key string, cg *cgroupStats, cpu **statsapi.CPUStats, mem **statsapi.MemoryStats, r *round) {
	if *cpu == nil || (*cpu).UsageCoreNanoSeconds == nil {
		*cpu = p.cgroupCPU(key, r.now, *cg)
	}
	if *mem == nil || (*mem).WorkingSetBytes == nil {
		*mem = cgroupMemory(r.now, *cg, 0)
	}
}

// addPSI sets the cgroup's cpu and memory pressure on the stats that have
// none (the runtime gives none).
func addPSI(cg *cgroupStats, cpu *statsapi.CPUStats, mem *statsapi.MemoryStats) {
	if cpu != nil && cpu.PSI == nil {
		cpu.PSI = cg.cpuPSI
	}
	if mem != nil && mem.PSI == nil {
		mem.PSI = cg.memoryPSI
	}
}

// measured reports whether anything of the pod's CPU or memory, or of one
// of its containers', was read.
func measured(ps statsapi.PodStats) bool {
	if ps.CPU != nil || ps.Memory != nil {
		return true
	}
	for _, c := range ps.Containers {
		if c.CPU != nil || c.Memory != nil {
			return true
		}
	}
	return false
}
