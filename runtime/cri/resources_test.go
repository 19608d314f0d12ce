package cri

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

const testNodeMemory = 4 << 30 // 4Gi

func TestMilliCPUConversionsMatchTheKubelet(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		milli, shares, quota int64
	}{
		{0, 2, 0}, {1, 2, 1000}, {5, 5, 1000}, {10, 10, 1000}, {100, 102, 10000},
		{250, 256, 25000}, {1000, 1024, 100000}, {1500, 1536, 150000}, {300000, 262144, 30000000},
	} {
		if got := milliCPUToShares(c.milli); got != c.shares {
			t.Errorf("milliCPUToShares(%d) = %d, want %d", c.milli, got, c.shares)
		}
		if got := milliCPUToQuota(c.milli, quotaPeriod); got != c.quota {
			t.Errorf("milliCPUToQuota(%d) = %d, want %d", c.milli, got, c.quota)
		}
	}
}

// withContainerResources gives newPod's first container these resources.
func withContainerResources(requests, limits corev1.ResourceList) *corev1.Pod {
	pod := newPod("u1", "a")
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: requests, Limits: limits}
	return pod
}

func TestContainerResourcesSentToTheRuntime(t *testing.T) {
	t.Parallel()
	sidecarPod := withContainerResources(quantities("memory", "2Gi"), nil)
	always := corev1.ContainerRestartPolicyAlways
	sidecarPod.Spec.InitContainers = []corev1.Container{{Name: "side", RestartPolicy: &always,
		Resources: corev1.ResourceRequirements{Requests: quantities("memory", "1Gi")}}}
	critical := withContainerResources(nil, nil)
	critical.Spec.PriorityClassName = "system-node-critical"
	critical.Annotations[annotationSource] = "file"
	podLevel := withContainerResources(nil, nil)
	podLevel.Spec.Resources = &corev1.ResourceRequirements{Limits: quantities("cpu", "2", "memory", "1Gi")}
	cases := []struct {
		name      string
		pod       *corev1.Pod
		container *corev1.Container
		cfg       func(*Config)
		want      *runtimeapi.LinuxContainerResources
	}{
		{"a BestEffort container gets minimum shares, no quota and the BestEffort score", withContainerResources(nil, nil), nil, nil,
			&runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, OomScoreAdj: 1000}},
		{"a Guaranteed container gets its limits and the Guaranteed score", withContainerResources(quantities("cpu", "500m", "memory", "128Mi"), quantities("cpu", "500m", "memory", "128Mi")), nil, nil,
			&runtimeapi.LinuxContainerResources{CpuShares: 512, CpuPeriod: 100000, CpuQuota: 50000, MemoryLimitInBytes: 128 << 20, OomScoreAdj: -997}},
		{"a Burstable container scores by its share of the node's memory", withContainerResources(quantities("cpu", "250m", "memory", "1Gi"), quantities("cpu", "1", "memory", "2Gi")), nil, nil,
			&runtimeapi.LinuxContainerResources{CpuShares: 256, CpuPeriod: 100000, CpuQuota: 100000, MemoryLimitInBytes: 2 << 30, OomScoreAdj: 750}},
		{"a limit without a request sets the shares from the limit", withContainerResources(quantities("memory", "1Mi"), quantities("cpu", "2")), nil, nil,
			&runtimeapi.LinuxContainerResources{CpuShares: 2048, CpuPeriod: 100000, CpuQuota: 200000, OomScoreAdj: 999}},
		{"a Burstable score never goes below 3", withContainerResources(quantities("memory", "4Gi"), quantities("memory", "8Gi")), nil, nil,
			&runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, MemoryLimitInBytes: 8 << 30, OomScoreAdj: 3}},
		{"without CFS quota no period or quota is sent", withContainerResources(quantities("cpu", "1"), quantities("cpu", "1")), nil, func(c *Config) { c.DisableCPUCFSQuota = true },
			&runtimeapi.LinuxContainerResources{CpuShares: 1024, OomScoreAdj: 999}},
		{"a sidecar scores no higher than the smallest regular container", sidecarPod, &sidecarPod.Spec.InitContainers[0], nil,
			&runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, OomScoreAdj: 500}},
		{"a node-critical static pod gets the Guaranteed score", critical, nil, nil,
			&runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, OomScoreAdj: -997}},
		{"pod-level limits stand in for missing container limits", podLevel, nil, nil,
			&runtimeapi.LinuxContainerResources{CpuShares: 2048, CpuPeriod: 100000, CpuQuota: 200000, MemoryLimitInBytes: 1 << 30, OomScoreAdj: -997}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEnv(t, func(cfg *Config) {
				cfg.NodeMemoryBytes = testNodeMemory
				if c.cfg != nil {
					c.cfg(cfg)
				}
			})
			ctr := c.container
			if ctr == nil {
				ctr = &c.pod.Spec.Containers[0]
			}
			got := e.m.containerResources(c.pod, ctr)
			if got.String() != c.want.String() {
				t.Errorf("resources =\n  %v\nwant\n  %v", got, c.want)
			}
		})
	}
}

func TestSyncPodSendsResourcesToTheSandboxAndContainer(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, func(c *Config) { c.NodeMemoryBytes = testNodeMemory })
	pod := withContainerResources(quantities("cpu", "100m", "memory", "64Mi"), quantities("cpu", "200m", "memory", "64Mi"))
	pod.Spec.Overhead = quantities("cpu", "10m", "memory", "1Mi")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	lc := e.rs.lastContainerConfig(t).GetLinux().GetResources()
	if lc.GetCpuShares() != 102 || lc.GetCpuQuota() != 20000 || lc.GetMemoryLimitInBytes() != 64<<20 || lc.GetOomScoreAdj() != 985 {
		t.Errorf("container resources = %v", lc)
	}
	sb := e.rs.sandboxConfigs[0].GetLinux()
	if r := sb.GetResources(); r.GetCpuShares() != 102 || r.GetCpuQuota() != 20000 || r.GetMemoryLimitInBytes() != 64<<20 {
		t.Errorf("sandbox resources = %v", r)
	}
	if o := sb.GetOverhead(); o.GetCpuShares() != 10 || o.GetCpuQuota() != 1000 || o.GetMemoryLimitInBytes() != 1<<20 {
		t.Errorf("sandbox overhead = %v", o)
	}
}

func TestNodeMemoryDefaultsToMemTotal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "proc/meminfo"), []byte("MemTotal:        4194304 kB\nMemFree: 1 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &hostFacts{sysRoot: dir}
	if got := h.memoryCapacity(0); got != testNodeMemory {
		t.Errorf("memoryCapacity from meminfo = %d, want %d", got, testNodeMemory)
	}
	if got := h.memoryCapacity(1 << 20); got != 1<<20 {
		t.Errorf("configured memoryCapacity = %d, want it to win", got)
	}
	if got := (&hostFacts{sysRoot: t.TempDir()}).memoryCapacity(0); got != 0 {
		t.Errorf("memoryCapacity without meminfo = %d, want 0", got)
	}
}

func TestMaskedPathsAddEachCPUsThermalThrottle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, p := range []string{"sys/devices/system/cpu/cpu0/thermal_throttle", "sys/devices/system/cpu/cpu2/thermal_throttle"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "sys/devices/system/cpu/possible"), []byte("0-1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := (&hostFacts{sysRoot: dir}).maskedPaths()
	want := append(staticMaskedPaths[:], "/sys/devices/system/cpu/cpu0/thermal_throttle", "/sys/devices/system/cpu/cpu2/thermal_throttle")
	if len(got) != len(want) || got[len(got)-1] != want[len(want)-1] || got[len(got)-2] != want[len(want)-2] {
		t.Errorf("maskedPaths = %v, want %v", got, want)
	}
}

func TestCreatingASandboxMakesThePodCgroupFirst(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		pod        *corev1.Pod
		wantParent string
		wantShares int64
	}{
		{"a Guaranteed pod's cgroup is under kubepods", withContainerResources(quantities("cpu", "1", "memory", "1Gi"), quantities("cpu", "1", "memory", "1Gi")),
			"/nk/kubepods/podu1", 1024},
		{"a Burstable pod's cgroup is under kubepods/burstable", withContainerResources(quantities("cpu", "100m"), nil),
			"/nk/kubepods/burstable/podu1", 102},
		{"a BestEffort pod's cgroup is under kubepods/besteffort", withContainerResources(nil, nil),
			"/nk/kubepods/besteffort/podu1", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEnv(t, func(cfg *Config) { cfg.CgroupParent = "/nk" })
			if err := e.sync(t, c.pod).Error(); err != nil {
				t.Fatalf("SyncPod: %v", err)
			}
			if got := e.rs.sandboxConfigs[0].GetLinux().GetCgroupParent(); got != c.wantParent {
				t.Errorf("CgroupParent = %q, want %q", got, c.wantParent)
			}
			res, ok := e.cgroups.get(c.wantParent)
			if !ok || res.CPUShares == nil || *res.CPUShares != c.wantShares {
				t.Errorf("pod cgroup %s ensured=%v resources=%v, want shares %d", c.wantParent, ok, res, c.wantShares)
			}
		})
	}
}

func TestAPodCgroupThatCannotBeMadeFailsTheSandbox(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, func(cfg *Config) { cfg.CgroupParent = "/nk" })
	e.cgroups.failWith = os.ErrPermission
	r := e.sync(t, newPod("u1", "a"))
	step, ok := failedSteps(r)["CreatePodSandbox/web-u1_default(u1)"]
	if !ok || len(e.rs.sandboxConfigs) != 0 {
		t.Fatalf("steps %v, sandboxes %d: want a failed CreatePodSandbox and no RunPodSandbox", r.Steps, len(e.rs.sandboxConfigs))
	}
	if want := "cgroups exist and are correctly applied"; !strings.Contains(step.Message, want) {
		t.Errorf("message %q does not say %q", step.Message, want)
	}
}

func TestGarbageCollectRemovesTheCgroupOfARemovedPod(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, func(cfg *Config) { cfg.CgroupParent = "/nk" })
	pod := newPod("u1", "a")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	ctx := context.Background()
	if err := e.m.GarbageCollect(ctx, func(types.UID) bool { return false }); err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	if _, ok := e.cgroups.get("/nk/kubepods/besteffort/podu1"); !ok {
		t.Fatal("the cgroup of a pod that still exists was removed")
	}
	if err := e.m.KillPod(ctx, pod, e.status(t, pod).ToPod(), nil); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	if err := e.m.GarbageCollect(ctx, func(types.UID) bool { return true }); err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	if _, ok := e.cgroups.get("/nk/kubepods/besteffort/podu1"); ok {
		t.Errorf("the cgroup of a removed pod is left; removed: %v", e.cgroups.removed)
	}
}
