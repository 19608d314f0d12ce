package sim

import (
	"cmp"
	"context"
	"hash/fnv"
	"maps"
	"slices"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Simulated figures. Nothing runs, so the stats calls make up plausible
// ones, steady per container: each running container uses 5-50 millicores
// and 4-20 MiB (chosen from a hash of its ID), its cumulative CPU grows with
// the time it has run on the clock, its writable layer holds 4-256 KiB; a
// sandbox adds its pause process (0.1 millicores, 512 KiB) and its network
// counters grow by 2 KB/s received and 1 KB/s sent while it is ready.
const (
	simPauseNanoCores = 100_000
	simPauseMemory    = 512 << 10
	simFsMount        = "/sim/containers"
)

// containerFigures are one container's made-up rates.
type containerFigures struct {
	nanoCores, workingSet, layer uint64
}

func figuresOf(id string) containerFigures {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	v := h.Sum64()
	return containerFigures{
		nanoCores:  5_000_000 + v%45_000_000,
		workingSet: 4<<20 + (v>>16)%(16<<20),
		layer:      4096 * (1 + (v>>40)%64),
	}
}

// statsLocked is a container's stats at now (CRI nanoseconds). Only a
// running container reports CPU and memory, as containerd does.
func (c *container) statsLocked(now int64) *runtimeapi.ContainerStats {
	f := figuresOf(c.id)
	s := &runtimeapi.ContainerStats{
		Attributes: &runtimeapi.ContainerAttributes{
			Id: c.id, Metadata: c.metadata(), Labels: maps.Clone(c.labels), Annotations: maps.Clone(c.annotations),
		},
		WritableLayer: &runtimeapi.FilesystemUsage{
			Timestamp: now, FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: simFsMount},
			UsedBytes: u64(f.layer), InodesUsed: u64(f.layer / 4096),
		},
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return s
	}
	ran := uint64(max(now-c.startedAt, 0))
	s.Cpu = &runtimeapi.CpuUsage{
		Timestamp:            now,
		UsageCoreNanoSeconds: u64(uint64(float64(ran) * float64(f.nanoCores) / 1e9)),
		UsageNanoCores:       u64(f.nanoCores),
	}
	s.Memory = &runtimeapi.MemoryUsage{
		Timestamp: now, WorkingSetBytes: u64(f.workingSet), UsageBytes: u64(f.workingSet + 1<<20),
		RssBytes: u64(f.workingSet / 2), PageFaults: u64(f.workingSet / 4096), MajorPageFaults: u64(0),
	}
	return s
}

// statsLocked is a ready sandbox's stats at now: its running containers'
// sums plus the pause process, its network counters and process count.
func (sb *sandbox) statsLocked(now int64) *runtimeapi.PodSandboxStats {
	cpu, nanoCores, mem := uint64(float64(max(now-sb.createdAt, 0))*simPauseNanoCores/1e9), uint64(simPauseNanoCores), uint64(simPauseMemory)
	procs := uint64(1)
	var cs []*runtimeapi.ContainerStats
	for _, c := range sortedContainers(sb.containers) {
		s := c.statsLocked(now)
		cs = append(cs, s)
		if s.Cpu != nil {
			cpu += s.Cpu.UsageCoreNanoSeconds.Value
			nanoCores += s.Cpu.UsageNanoCores.Value
			mem += s.Memory.WorkingSetBytes.Value
			procs++
		}
	}
	secs := uint64(max(now-sb.createdAt, 0) / 1e9)
	eth0 := &runtimeapi.NetworkInterfaceUsage{
		Name: "eth0", RxBytes: u64(2000 * secs), RxErrors: u64(0), TxBytes: u64(1000 * secs), TxErrors: u64(0),
	}
	return &runtimeapi.PodSandboxStats{
		Attributes: &runtimeapi.PodSandboxAttributes{
			Id: sb.id, Metadata: sb.metadata(), Labels: maps.Clone(sb.labels), Annotations: maps.Clone(sb.annotations),
		},
		Linux: &runtimeapi.LinuxPodSandboxStats{
			Cpu:        &runtimeapi.CpuUsage{Timestamp: now, UsageCoreNanoSeconds: u64(cpu), UsageNanoCores: u64(nanoCores)},
			Memory:     &runtimeapi.MemoryUsage{Timestamp: now, WorkingSetBytes: u64(mem), UsageBytes: u64(mem + 1<<20), RssBytes: u64(mem / 2)},
			Network:    &runtimeapi.NetworkUsage{Timestamp: now, DefaultInterface: eth0, Interfaces: []*runtimeapi.NetworkInterfaceUsage{eth0}},
			Process:    &runtimeapi.ProcessUsage{Timestamp: now, ProcessCount: u64(procs)},
			Containers: cs,
		},
	}
}

// ContainerStats reports one container's simulated stats; NotFound for an
// unknown ID.
func (r *Runtime) ContainerStats(ctx context.Context, containerID string) (*runtimeapi.ContainerStats, error) {
	if err := r.begin(ctx, "ContainerStats"); err != nil {
		return nil, err
	}
	now := r.nanos()
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := lookupPrefix(r.containers, containerID, "container")
	if err != nil {
		return nil, err
	}
	return c.statsLocked(now), nil
}

// ListContainerStats reports the simulated stats of the containers the
// filter (ID, sandbox ID, label selector) matches.
func (r *Runtime) ListContainerStats(ctx context.Context, filter *runtimeapi.ContainerStatsFilter) ([]*runtimeapi.ContainerStats, error) {
	if err := r.begin(ctx, "ListContainerStats"); err != nil {
		return nil, err
	}
	now := r.nanos()
	r.mu.Lock()
	defer r.mu.Unlock()
	found := map[string]*container{}
	for _, c := range r.containers {
		if matchID(c.id, filter.GetId()) && matchID(c.sandboxID, filter.GetPodSandboxId()) &&
			matchLabels(c.labels, filter.GetLabelSelector()) {
			found[c.id] = c
		}
	}
	out := make([]*runtimeapi.ContainerStats, 0, len(found))
	for _, c := range sortedContainers(found) {
		out = append(out, c.statsLocked(now))
	}
	return out, nil
}

// PodSandboxStats reports one ready sandbox's simulated stats; NotFound for
// an unknown ID or a sandbox that is not ready (containerd has no stats for
// it either).
func (r *Runtime) PodSandboxStats(ctx context.Context, podSandboxID string) (*runtimeapi.PodSandboxStats, error) {
	if err := r.begin(ctx, "PodSandboxStats"); err != nil {
		return nil, err
	}
	now := r.nanos()
	r.mu.Lock()
	defer r.mu.Unlock()
	sb, err := lookupPrefix(r.sandboxes, podSandboxID, "sandbox")
	if err != nil {
		return nil, err
	}
	if sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, notFound("ready sandbox", podSandboxID)
	}
	return sb.statsLocked(now), nil
}

// ListPodSandboxStats reports the simulated stats of the ready sandboxes
// the filter (ID, label selector) matches, in creation order.
func (r *Runtime) ListPodSandboxStats(ctx context.Context, filter *runtimeapi.PodSandboxStatsFilter) ([]*runtimeapi.PodSandboxStats, error) {
	if err := r.begin(ctx, "ListPodSandboxStats"); err != nil {
		return nil, err
	}
	now := r.nanos()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*runtimeapi.PodSandboxStats
	for _, sb := range r.sandboxes {
		if sb.state == runtimeapi.PodSandboxState_SANDBOX_READY && matchID(sb.id, filter.GetId()) &&
			matchLabels(sb.labels, filter.GetLabelSelector()) {
			out = append(out, sb.statsLocked(now))
		}
	}
	slices.SortFunc(out, func(a, b *runtimeapi.PodSandboxStats) int {
		return cmp.Compare(r.sandboxes[a.Attributes.Id].seq, r.sandboxes[b.Attributes.Id].seq)
	})
	return out, nil
}

func u64(v uint64) *runtimeapi.UInt64Value { return &runtimeapi.UInt64Value{Value: v} }
