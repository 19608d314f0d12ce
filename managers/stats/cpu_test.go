package stats

import (
	"context"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
)

func TestCPUCacheRateIsOverTheLastInterval(t *testing.T) {
	t.Parallel()
	none := uint64(1<<64 - 1) // marks "want nil"
	type reading struct {
		step  time.Duration // after the previous reading
		usage uint64        // cumulative CPU nanoseconds
		want  uint64        // nanocores, or none
	}
	for _, tc := range []struct {
		name     string
		readings []reading
	}{
		{"first reading has no rate", []reading{{0, 5e9, none}}},
		{"a reading before the interval gives the rate since the first", []reading{
			{0, 0, none}, {2 * time.Second, 1e9, 5e8},
		}},
		{"a reading at the interval replaces the sample", []reading{
			{0, 0, none}, {10 * time.Second, 10e9, 1e9}, {10 * time.Second, 10e9, 0}, {10 * time.Second, 30e9, 2e9},
		}},
		{"closer readings repeat the last rate", []reading{
			{0, 0, none}, {10 * time.Second, 10e9, 1e9}, {time.Second, 10e9, 1e9}, {8 * time.Second, 11e9, 1e9},
			// 10 s after the stored reading: 3 CPU-seconds since.
			{time.Second, 13e9, 3e8},
		}},
		{"a counter that went back is a new instance", []reading{
			{0, 0, none}, {10 * time.Second, 10e9, 1e9}, {10 * time.Second, 1e9, none}, {10 * time.Second, 6e9, 5e8},
		}},
		{"a reading older than the cache period is not used", []reading{
			{0, 0, none}, {11 * time.Minute, 66e10, none}, {10 * time.Second, 67e10, 1e9},
		}},
		{"the same time twice gives no rate", []reading{{0, 0, none}, {0, 0, none}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCPUCache()
			at := time.Unix(1800000000, 0)
			for i, r := range tc.readings {
				at = at.Add(r.step)
				got := c.nanoCores("k", at, r.usage)
				switch {
				case r.want == none && got != nil:
					t.Errorf("reading %d: %d nanocores, want none", i, *got)
				case r.want != none && got == nil:
					t.Errorf("reading %d: no nanocores, want %d", i, r.want)
				case r.want != none && *got != r.want:
					t.Errorf("reading %d: %d nanocores, want %d", i, *got, r.want)
				}
			}
		})
	}
}

// cgroupOnlyPod is podFixture with no runtime stats at all, so that pod and
// container CPU come from the cgroups under /kp.
const cgroupOnlyPod = "/kp/kubepods/burstable/poduid1"

func TestCPUOnlyReadsReportTheRecentRate(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	f := newFakeRuntime()
	podFixture(f)
	p := f.provider(h, Config{InstanceID: "me", CgroupRoot: "/kp"})
	// metrics-server's scrapes every 15 s, and nothing else: the node
	// busy with 2 cores, then idle, then at 1 core; the app at 1 core,
	// then idle.
	for i, r := range []struct {
		node, app         uint64 // cumulative CPU-seconds
		wantNode, wantApp float64
	}{
		{node: 100, app: 10, wantNode: -1, wantApp: -1},
		{node: 130, app: 25, wantNode: 2, wantApp: 1},
		{node: 160, app: 40, wantNode: 2, wantApp: 1},
		{node: 160, app: 40, wantNode: 0, wantApp: 0},
		{node: 175, app: 40, wantNode: 1, wantApp: 0},
	} {
		if i > 0 {
			f.clk.Step(15 * time.Second)
		}
		h.cgroup("/", r.node*1e9, 600<<20, 100<<20, "")
		h.cgroup(cgroupOnlyPod, r.app*1e9, 300<<20, 0, "")
		h.cgroup(cgroupOnlyPod+"/"+c1, r.app*1e9, 200<<20, 0, "")
		h.cgroup(cgroupOnlyPod+"/"+c2, 0, 10<<20, 0, "")
		s, err := p.Summary(context.Background(), true)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Pods) != 1 || len(s.Pods[0].Containers) != 2 {
			t.Fatalf("scrape %d: pods %+v, want web with app and sidecar", i, s.Pods)
		}
		for _, got := range []struct {
			what string
			v    *uint64
			want float64
		}{
			{"node", s.Node.CPU.UsageNanoCores, r.wantNode},
			{"pod", s.Pods[0].CPU.UsageNanoCores, r.wantApp},
			{"app", s.Pods[0].Containers[0].CPU.UsageNanoCores, r.wantApp},
		} {
			switch {
			case got.want < 0 && got.v != nil:
				t.Errorf("scrape %d: %s %d nanocores, want none on the first", i, got.what, *got.v)
			case got.want >= 0 && got.v == nil:
				t.Errorf("scrape %d: %s has no nanocores, want %v cores", i, got.what, got.want)
			case got.want >= 0 && *got.v != uint64(got.want*1e9):
				t.Errorf("scrape %d: %s %d nanocores, want the last 15 s's %v cores (not the average since the first scrape)",
					i, got.what, *got.v, got.want)
			}
		}
	}
}

func TestCPUOnlyReadsPruneGoneContainersAndPods(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	f := newFakeRuntime()
	podFixture(f)
	h.cgroup(cgroupOnlyPod, 3e9, 300<<20, 0, "")
	h.cgroup(cgroupOnlyPod+"/"+c1, 1e9, 200<<20, 0, "")
	h.cgroup(cgroupOnlyPod+"/"+c2, 2e9, 10<<20, 0, "")
	p := f.provider(h, Config{InstanceID: "me", CgroupRoot: "/kp"})
	read := func() {
		t.Helper()
		if _, err := p.Summary(context.Background(), true); err != nil {
			t.Fatal(err)
		}
	}
	read()
	assertSamples(t, p, "after the first read", nodeCPUKey, sb1, c1, c2)

	// The sidecar is removed.
	f.rs.SetFakeContainers([]*critest.FakeContainer{
		container(c1, sb1, "app", "me", runtimeapi.ContainerState_CONTAINER_RUNNING, 200),
	})
	f.clk.Step(15 * time.Second)
	read()
	assertSamples(t, p, "after the sidecar's removal", nodeCPUKey, sb1, c1)

	// Then the whole pod.
	f.rs.SetFakeSandboxes(nil)
	f.rs.SetFakeContainers(nil)
	f.clk.Step(15 * time.Second)
	read()
	assertSamples(t, p, "after the pod's removal", nodeCPUKey)
}

func assertSamples(t *testing.T, p *CRI, when string, keys ...string) {
	t.Helper()
	p.cpu.mu.Lock()
	defer p.cpu.mu.Unlock()
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
		if _, ok := p.cpu.samples[k]; !ok {
			t.Errorf("%s: no CPU sample of %s", when, k)
		}
	}
	for k := range p.cpu.samples {
		if !want[k] {
			t.Errorf("%s: CPU sample of %s kept, want it pruned", when, k)
		}
	}
}

func TestTheRuntimesNanoCoresAreUsedAsTheyAre(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	f := newFakeRuntime()
	podFixture(f)
	p := f.provider(h, Config{InstanceID: "me"})
	// containerd 2 fills UsageNanoCores for the pod and the app; the
	// sidecar's comes without it.
	stats := func(podCores, appCores, sidecarSeconds uint64) {
		ts := f.clk.Now().UnixNano()
		cpu := func(total, cores uint64) *runtimeapi.CpuUsage {
			return &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: u64(total), UsageNanoCores: u64(cores)}
		}
		f.rs.SetFakePodSandboxStats([]*runtimeapi.PodSandboxStats{{
			Attributes: &runtimeapi.PodSandboxAttributes{Id: sb1},
			Linux: &runtimeapi.LinuxPodSandboxStats{
				Cpu: cpu(1e12, podCores),
				Containers: []*runtimeapi.ContainerStats{
					{Attributes: &runtimeapi.ContainerAttributes{Id: c1}, Cpu: cpu(1e12, appCores)},
					{Attributes: &runtimeapi.ContainerAttributes{Id: c2}, Cpu: &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: u64(sidecarSeconds * 1e9)}},
				},
			},
		}})
	}
	for i, r := range []struct {
		pod, app, sidecar uint64
		wantSidecar       int64 // nanocores, -1 for none
	}{
		{pod: 700, app: 500, sidecar: 10, wantSidecar: -1},
		{pod: 300, app: 100, sidecar: 20, wantSidecar: 1e9},
		{pod: 900, app: 800, sidecar: 20, wantSidecar: 0},
	} {
		if i > 0 {
			f.clk.Step(10 * time.Second)
		}
		stats(r.pod, r.app, r.sidecar)
		pods, err := p.ListPodStats(context.Background(), true)
		if err != nil {
			t.Fatal(err)
		}
		pod := pods[0]
		if got := val(t, "pod nanocores", pod.CPU.UsageNanoCores); got != r.pod {
			t.Errorf("read %d: pod %d nanocores, want the runtime's %d", i, got, r.pod)
		}
		if got := val(t, "app nanocores", pod.Containers[0].CPU.UsageNanoCores); got != r.app {
			t.Errorf("read %d: app %d nanocores, want the runtime's %d", i, got, r.app)
		}
		got := pod.Containers[1].CPU.UsageNanoCores
		switch {
		case r.wantSidecar < 0 && got != nil:
			t.Errorf("read %d: sidecar %d nanocores, want none on the first", i, *got)
		case r.wantSidecar >= 0 && got == nil:
			t.Errorf("read %d: sidecar has no nanocores, want %d computed from its readings", i, r.wantSidecar)
		case r.wantSidecar >= 0 && *got != uint64(r.wantSidecar):
			t.Errorf("read %d: sidecar %d nanocores, want %d computed from its readings", i, *got, r.wantSidecar)
		}
	}
	// Only the sidecar, whose nanocores the runtime left empty, has a
	// sample; the node's comes from a full node read, not made here.
	assertSamples(t, p, "after the reads", c2)
}
