package stats

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The files under testdata/cgroupv2 are a cgroup v2 (unified) mount in the
// formats of the kernel's Documentation/admin-guide/cgroup-v2.rst
// (cpu.stat, memory.stat, memory.current, memory.max, io.stat,
// pids.current) and Documentation/accounting/psi.rst (the *.pressure
// files): the root cgroup (which has no memory.current), the pods cgroup
// /nodekit/kubepods, pod uid1's burstable cgroup and its container c1's.

const mib = 1 << 20

// v2Provider is a CRI provider on testdata/cgroupv2 with pod cgroups under
// /nodekit and an 8 GiB host.
func v2Provider(t *testing.T, f *fakeRuntime) *CRI {
	t.Helper()
	h := newFakeHost(t)
	h.write(h.proc, "meminfo", "MemTotal:       8388608 kB\nMemFree:         900000 kB\nInactive(file):  999999 kB\nAnonPages:       777777 kB\n")
	root, err := filepath.Abs("testdata/cgroupv2")
	if err != nil {
		t.Fatal(err)
	}
	return NewCRI(f.rs, f.is, f.clk, logr.Discard(), Config{
		InstanceID: "me", CgroupRoot: "nodekit", CgroupfsRoot: root, ProcRoot: h.proc, RootDir: filepath.Dir(h.proc),
	})
}

func TestNodeStatsOnCgroupV2(t *testing.T) {
	t.Parallel()
	p := v2Provider(t, newFakeRuntime())

	ns, err := p.NodeStats(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if got := val(t, "cpu", ns.CPU.UsageCoreNanoSeconds); got != 9126452331*1000 {
		t.Errorf("cpu %d, want cpu.stat usage_usec in ns", got)
	}
	// The root has no memory.current: usage is memory.stat anon + file
	// (1177 + 2355 MiB), the working set that minus inactive_file (1536).
	if got := val(t, "usage", ns.Memory.UsageBytes); got != 3532*mib {
		t.Errorf("usage %d MiB, want anon + file = 3532 MiB", got/mib)
	}
	if got := val(t, "working set", ns.Memory.WorkingSetBytes); got != 1996*mib {
		t.Errorf("working set %d MiB, want anon + file - inactive_file = 1996 MiB", got/mib)
	}
	if got := val(t, "available", ns.Memory.AvailableBytes); got != 8192*mib-1996*mib {
		t.Errorf("available %d MiB, want MemTotal - working set = 6196 MiB", got/mib)
	}
	if got := val(t, "rss", ns.Memory.RSSBytes); got != 1177*mib {
		t.Errorf("rss %d MiB, want memory.stat anon", got/mib)
	}
	wantPSI(t, "node cpu", ns.CPU.PSI, statsapi.PSIStats{Some: statsapi.PSIData{Avg10: 2.04, Avg60: 1.46, Avg300: 0.77, Total: 183921734000}})
	wantPSI(t, "node memory", ns.Memory.PSI, statsapi.PSIStats{
		Some: statsapi.PSIData{Avg10: 0.31, Avg60: 0.12, Avg300: 0.03, Total: 2215873000},
		Full: statsapi.PSIData{Avg10: 0.20, Avg60: 0.08, Avg300: 0.02, Total: 1398221000},
	})
	if ns.IO == nil {
		t.Fatal("no node IO stats")
	}
	wantPSI(t, "node io", ns.IO.PSI, statsapi.PSIStats{
		Some: statsapi.PSIData{Avg10: 4.67, Avg60: 3.10, Avg300: 1.52, Total: 904421357000},
		Full: statsapi.PSIData{Avg10: 4.01, Avg60: 2.77, Avg300: 1.33, Total: 801233906000},
	})

	if len(ns.SystemContainers) != 1 || ns.SystemContainers[0].Name != statsapi.SystemContainerPods {
		t.Fatalf("system containers %+v, want pods", ns.SystemContainers)
	}
	pods := ns.SystemContainers[0]
	if got := val(t, "pods working set", pods.Memory.WorkingSetBytes); got != 544*mib {
		t.Errorf("pods working set %d MiB, want memory.current - inactive_file = 640 - 96 = 544 MiB", got/mib)
	}
	if pods.IO == nil || pods.IO.PSI == nil || pods.IO.PSI.Some.Total != 330127000 {
		t.Errorf("pods io %+v, want its io.pressure", pods.IO)
	}
}

func TestPodStatsFromCgroupV2(t *testing.T) {
	t.Parallel()
	f := newFakeRuntime()
	podFixture(f)
	// containerd with a sandbox it gives no figures for.
	f.rs.SetFakePodSandboxStats([]*runtimeapi.PodSandboxStats{{
		Attributes: &runtimeapi.PodSandboxAttributes{Id: sb1}, Linux: &runtimeapi.LinuxPodSandboxStats{},
	}})
	p := v2Provider(t, f)

	got, err := p.ListPodStats(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("pods %+v, want web", got)
	}
	pod := got[0]
	if v := val(t, "pod cpu", pod.CPU.UsageCoreNanoSeconds); v != 48213597*1000 {
		t.Errorf("pod cpu %d, want cpu.stat usage_usec in ns", v)
	}
	// memory.current 150 MiB, inactive_file 40 MiB (anon + file is 148 MiB:
	// a formula on memory.stat alone gives another figure).
	if v := val(t, "pod working set", pod.Memory.WorkingSetBytes); v != 110*mib {
		t.Errorf("pod working set %d MiB, want memory.current - inactive_file = 110 MiB", v/mib)
	}
	if v := val(t, "pod usage", pod.Memory.UsageBytes); v != 150*mib {
		t.Errorf("pod usage %d MiB, want memory.current", v/mib)
	}
	if v := val(t, "pod available", pod.Memory.AvailableBytes); v != 146*mib {
		t.Errorf("pod available %d MiB, want memory.max - working set = 146 MiB", v/mib)
	}
	if v := val(t, "pod faults", pod.Memory.MajorPageFaults); v != 41 {
		t.Errorf("pod major faults %d, want memory.stat pgmajfault", v)
	}
	wantPSI(t, "pod cpu", pod.CPU.PSI, statsapi.PSIStats{
		Some: statsapi.PSIData{Avg10: 1.53, Avg60: 0.87, Avg300: 0.21, Total: 4285133000},
		Full: statsapi.PSIData{Avg10: 0.42, Avg60: 0.19, Avg300: 0.04, Total: 1002315000},
	})
	if pod.IO == nil || pod.IO.PSI == nil || pod.IO.PSI.Full.Total != 4001000 {
		t.Errorf("pod io %+v, want its io.pressure", pod.IO)
	}
	if pod.ProcessStats == nil || val(t, "processes", pod.ProcessStats.ProcessCount) != 7 {
		t.Errorf("pod processes %+v, want pids.current", pod.ProcessStats)
	}
	app := pod.Containers[0]
	if v := val(t, "app working set", app.Memory.WorkingSetBytes); v != 96*mib {
		t.Errorf("app working set %d MiB, want 120 - 24 = 96 MiB", v/mib)
	}
	if app.Memory.AvailableBytes != nil {
		t.Errorf("app available %d, want none: memory.max is max", *app.Memory.AvailableBytes)
	}
	if app.CPU.PSI == nil || app.CPU.PSI.Some.Avg10 != 1.50 {
		t.Errorf("app cpu psi %+v, want its cpu.pressure", app.CPU.PSI)
	}
}

func TestCgroupV2Files(t *testing.T) {
	t.Parallel()
	io, err := readIOStat("testdata/cgroupv2/io.stat")
	if err != nil {
		t.Fatal(err)
	}
	want := []ioDeviceStats{
		{major: 259, minor: 0, rbytes: 2840965120, wbytes: 19614810112, rios: 98231, wios: 1532877, dbytes: 1048576, dios: 3},
		{major: 8, minor: 0, rbytes: 1459200, rios: 192},
	}
	if len(io) != 2 || io[0] != want[0] || io[1] != want[1] {
		t.Errorf("io.stat %+v, want %+v", io, want)
	}
	if psi, err := readPressure(filepath.Join(t.TempDir(), "cpu.pressure")); psi != nil || err != nil {
		t.Errorf("missing pressure file: %+v, %v; want nil, nil (a kernel without PSI)", psi, err)
	}
	// Without memory.stat at the root (old kernels) the node's memory
	// comes from /proc/meminfo.
	h := newFakeHost(t)
	h.write(h.cgroups, "cgroup.controllers", "cpu memory\n")
	h.write(h.cgroups, "cpu.stat", "usage_usec 10\n")
	s, capacity, err := host{proc: h.proc, cgroups: cgroupReader{root: h.cgroups}}.nodeCgroup()
	if err != nil {
		t.Fatal(err)
	}
	if capacity != 1000000*1024 || s.memUsage != 800000*1024 || s.workingSet != 750000*1024 || s.cpuUsageNanos != 10000 {
		t.Errorf("meminfo fallback %+v capacity %d", s, capacity)
	}
}

func wantPSI(t *testing.T, what string, got *statsapi.PSIStats, want statsapi.PSIStats) {
	t.Helper()
	if got == nil {
		t.Errorf("%s psi missing", what)
		return
	}
	if *got != want {
		t.Errorf("%s psi %+v, want %+v", what, *got, want)
	}
}
