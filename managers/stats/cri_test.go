package stats

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

const (
	sb1 = "sb1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	c1  = "c1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	c2  = "c2aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
)

func val(t *testing.T, what string, p *uint64) uint64 {
	t.Helper()
	if p == nil {
		t.Fatalf("%s is missing", what)
	}
	return *p
}

func TestNodeStatsReadTheHost(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	f := newFakeRuntime()
	f.is.SetFakeFilesystemUsage([]*runtimeapi.FilesystemUsage{{
		Timestamp: 5, FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: h.proc}, UsedBytes: u64(4096), InodesUsed: u64(7),
	}})
	p := f.provider(h, Config{NodeName: "n1"})

	ns, err := p.NodeStats(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if ns.NodeName != "n1" || !ns.StartTime.Time.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("node name %q, start %v; want n1 at btime", ns.NodeName, ns.StartTime)
	}
	if got := val(t, "cpu usage", ns.CPU.UsageCoreNanoSeconds); got != 90e9 {
		t.Errorf("cpu usage %d, want the root cgroup's 90e9", got)
	}
	if got := val(t, "working set", ns.Memory.WorkingSetBytes); got != 500<<20 {
		t.Errorf("working set %d, want usage - total_inactive_file = %d", got, 500<<20)
	}
	if got := val(t, "available", ns.Memory.AvailableBytes); got != 1000000*1024-500<<20 {
		t.Errorf("available %d, want MemTotal - working set", got)
	}
	if got := val(t, "max pid", (*uint64)(ptrU(ns.Rlimit.MaxPID))); got != 190000 {
		t.Errorf("max pid %d, want the lower of pid_max and threads-max", got)
	}
	if got := *ns.Rlimit.NumOfRunningProcesses; got != 321 {
		t.Errorf("processes %d, want loadavg's 321", got)
	}
	if ns.Network == nil || ns.Network.Name != "eth0" || val(t, "rx", ns.Network.RxBytes) != 5000 || len(ns.Network.Interfaces) != 1 {
		t.Errorf("network %+v, want eth0 only (no lo, no veth)", ns.Network)
	}
	if ns.Fs == nil || val(t, "fs capacity", ns.Fs.CapacityBytes) == 0 {
		t.Errorf("nodefs %+v, want statfs of the root dir", ns.Fs)
	}
	img := ns.Runtime.ImageFs
	if val(t, "imagefs used", img.UsedBytes) != 4096 || val(t, "imagefs inodes used", img.InodesUsed) != 7 || val(t, "imagefs capacity", img.CapacityBytes) == 0 {
		t.Errorf("imagefs %+v, want the runtime's usage with statfs capacity", img)
	}
	if ns.Runtime.ContainerFs != img {
		t.Errorf("containerfs should be the imagefs when the runtime names none")
	}

	only, err := p.NodeStats(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if only.CPU == nil || only.Memory == nil || only.Fs != nil || only.Runtime != nil || only.Rlimit != nil || only.Network != nil {
		t.Errorf("only cpu and memory: %+v", only)
	}
}

func ptrU(p *int64) *uint64 {
	if p == nil {
		return nil
	}
	v := uint64(*p)
	return &v
}

// podFixture is one ready pod of two running containers (and an exited
// earlier instance of the first), plus a pod of another agent.
func podFixture(f *fakeRuntime) {
	f.rs.SetFakeSandboxes([]*critest.FakePodSandbox{
		sandbox(sb1, "web", "uid1", "me", runtimeapi.PodSandboxState_SANDBOX_READY, 100),
		sandbox("old", "web", "uid1", "me", runtimeapi.PodSandboxState_SANDBOX_NOTREADY, 50),
		sandbox("other", "theirs", "uid2", "someone-else", runtimeapi.PodSandboxState_SANDBOX_READY, 100),
	})
	f.rs.SetFakeContainers([]*critest.FakeContainer{
		container(c1, sb1, "app", "me", runtimeapi.ContainerState_CONTAINER_RUNNING, 200),
		container("c1-dead", sb1, "app", "me", runtimeapi.ContainerState_CONTAINER_EXITED, 150),
		container(c2, sb1, "sidecar", "me", runtimeapi.ContainerState_CONTAINER_RUNNING, 210),
		container("c3", "other", "x", "someone-else", runtimeapi.ContainerState_CONTAINER_RUNNING, 210),
	})
}

func TestPodStatsFromTheRuntime(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	f := newFakeRuntime()
	podFixture(f)
	ts := f.clk.Now().UnixNano()
	cstat := func(id string, cpu uint64) *runtimeapi.ContainerStats {
		return &runtimeapi.ContainerStats{
			Attributes:    &runtimeapi.ContainerAttributes{Id: id},
			Cpu:           &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: u64(cpu), UsageNanoCores: u64(cpu / 10)},
			Memory:        &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: u64(cpu * 2), UsageBytes: u64(cpu * 3)},
			WritableLayer: &runtimeapi.FilesystemUsage{FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: h.proc}, UsedBytes: u64(cpu * 4), InodesUsed: u64(3)},
		}
	}
	f.rs.SetFakePodSandboxStats([]*runtimeapi.PodSandboxStats{{
		Attributes: &runtimeapi.PodSandboxAttributes{Id: sb1},
		Linux: &runtimeapi.LinuxPodSandboxStats{
			Cpu:        &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: u64(3000), UsageNanoCores: u64(300)},
			Memory:     &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: u64(6000)},
			Network:    &runtimeapi.NetworkUsage{Timestamp: ts, DefaultInterface: &runtimeapi.NetworkInterfaceUsage{Name: "eth0", RxBytes: u64(11)}},
			Process:    &runtimeapi.ProcessUsage{Timestamp: ts, ProcessCount: u64(2)},
			Containers: []*runtimeapi.ContainerStats{cstat(c1, 1000), cstat(c2, 2000), cstat("c1-dead", 5)},
		},
	}, {Attributes: &runtimeapi.PodSandboxAttributes{Id: "other"}, Linux: &runtimeapi.LinuxPodSandboxStats{}}})
	podLogs := filepath.Join(filepath.Dir(h.proc), "pod-logs")
	h.write(filepath.Join(podLogs, "ns_web_uid1", "app"), "0.log", "hello\n")
	p := f.provider(h, Config{InstanceID: "me", PodLogsDir: podLogs})

	pods, err := p.ListPodStats(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 1 || pods[0].PodRef != (statsapi.PodReference{Name: "web", Namespace: "ns", UID: "uid1"}) {
		t.Fatalf("pods %+v, want only this agent's web pod, once", pods)
	}
	pod := pods[0]
	if val(t, "pod cpu", pod.CPU.UsageCoreNanoSeconds) != 3000 || val(t, "pod nanocores", pod.CPU.UsageNanoCores) != 300 ||
		val(t, "pod memory", pod.Memory.WorkingSetBytes) != 6000 {
		t.Errorf("pod cpu %+v memory %+v, want the runtime's", pod.CPU, pod.Memory)
	}
	if pod.Network == nil || val(t, "pod rx", pod.Network.RxBytes) != 11 || val(t, "processes", pod.ProcessStats.ProcessCount) != 2 {
		t.Errorf("pod network %+v processes %+v", pod.Network, pod.ProcessStats)
	}
	if len(pod.Containers) != 2 || pod.Containers[0].Name != "app" || pod.Containers[1].Name != "sidecar" {
		t.Fatalf("containers %+v, want app (running instance only) and sidecar", pod.Containers)
	}
	app := pod.Containers[0]
	if val(t, "app cpu", app.CPU.UsageCoreNanoSeconds) != 1000 || val(t, "app working set", app.Memory.WorkingSetBytes) != 2000 {
		t.Errorf("app cpu %+v memory %+v", app.CPU, app.Memory)
	}
	if app.StartTime.UnixNano() != 200 {
		t.Errorf("app start %v, want its CreatedAt", app.StartTime)
	}
	if val(t, "rootfs used", app.Rootfs.UsedBytes) != 4000 || val(t, "rootfs capacity", app.Rootfs.CapacityBytes) == 0 {
		t.Errorf("app rootfs %+v", app.Rootfs)
	}
	if app.Logs == nil || val(t, "logs used", app.Logs.UsedBytes) == 0 || val(t, "logs inodes", app.Logs.InodesUsed) != 2 {
		t.Errorf("app logs %+v, want the log dir and its file", app.Logs)
	}
	wantEph := 4000 + 8000 + *app.Logs.UsedBytes + *pod.Containers[1].Logs.UsedBytes
	if got := val(t, "ephemeral", pod.EphemeralStorage.UsedBytes); got != wantEph {
		t.Errorf("ephemeral storage %d, want rootfs + logs = %d", got, wantEph)
	}

	only, err := p.ListPodStats(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if c := only[0].Containers[0]; c.Rootfs != nil || c.Logs != nil || only[0].Network != nil || only[0].EphemeralStorage != nil || c.CPU == nil {
		t.Errorf("only cpu and memory: %+v", only[0])
	}
}

func TestWhatTheRuntimeLeavesEmptyComesFromTheCgroups(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	f := newFakeRuntime()
	podFixture(f)
	// A runtime without ListPodSandboxStats (containerd 1.6) whose
	// container stats carry only the writable layer.
	f.rs.InjectError("ListPodSandboxStats", status.Error(codes.Unimplemented, "not here"))
	f.rs.InjectError("ListPodSandboxStats", status.Error(codes.Unimplemented, "not here"))
	f.rs.SetFakeContainerStats([]*runtimeapi.ContainerStats{{
		Attributes: &runtimeapi.ContainerAttributes{Id: c1}, WritableLayer: &runtimeapi.FilesystemUsage{UsedBytes: u64(1)},
	}})
	pod := "/kp/kubepods/burstable/poduid1"
	h.cgroup(pod, 7e9, 300<<20, 100<<20, "")
	h.cgroup(pod+"/"+c1, 5e9, 200<<20, 50<<20, "1073741824")
	h.cgroup(pod+"/"+c2, 1e9, 10<<20, 0, "")
	p := f.provider(h, Config{InstanceID: "me", CgroupRoot: "/kp"})

	pods, err := p.ListPodStats(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	got := pods[0]
	if val(t, "pod cpu", got.CPU.UsageCoreNanoSeconds) != 7e9 || val(t, "pod working set", got.Memory.WorkingSetBytes) != 200<<20 {
		t.Errorf("pod cpu %+v memory %+v, want the pod cgroup's", got.CPU, got.Memory)
	}
	app := got.Containers[0]
	if val(t, "app cpu", app.CPU.UsageCoreNanoSeconds) != 5e9 || val(t, "app working set", app.Memory.WorkingSetBytes) != 150<<20 {
		t.Errorf("app cpu %+v memory %+v, want the container cgroup's (usage - total_inactive_file)", app.CPU, app.Memory)
	}
	if val(t, "app available", app.Memory.AvailableBytes) != 1<<30-150<<20 || got.Containers[1].Memory.AvailableBytes != nil {
		t.Errorf("available: app %v sidecar %v, want limit - working set, and none without a limit", app.Memory.AvailableBytes, got.Containers[1].Memory.AvailableBytes)
	}
	if val(t, "app rss", app.Memory.RSSBytes) != 50<<20 || val(t, "app faults", app.Memory.PageFaults) != 77 {
		t.Errorf("app memory %+v, want total_rss and total_pgfault", app.Memory)
	}
	if app.CPU.UsageNanoCores != nil {
		t.Errorf("nanocores %d on the first reading, want none", *app.CPU.UsageNanoCores)
	}
	if val(t, "app rootfs", app.Rootfs.UsedBytes) != 1 {
		t.Errorf("app rootfs %+v, want the runtime's", app.Rootfs)
	}

	// Ten seconds and 2.5 CPU-seconds later: 0.25 cores.
	f.clk.Step(10 * time.Second)
	h.cgroup(pod+"/"+c1, 7.5e9, 200<<20, 50<<20, "1073741824")
	pods, err = p.ListPodStats(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if got := val(t, "nanocores", pods[0].Containers[0].CPU.UsageNanoCores); got != 25e7 {
		t.Errorf("nanocores %d, want 250000000", got)
	}
}

func TestSummaryFailsWhenTheRuntimeFails(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	f := newFakeRuntime()
	podFixture(f)
	f.rs.InjectError("ListPodSandbox", status.Error(codes.Unavailable, "down"))
	if _, err := f.provider(h, Config{}).Summary(context.Background(), true); err == nil {
		t.Fatal("Summary succeeded with a failing runtime")
	}
}
