package cri

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/internal/qos"
)

// fakeCgroups is a cgroupManager that records what it is asked to do.
type fakeCgroups struct {
	mu       sync.Mutex
	ensured  map[string]*cgroupResources // by cgroupfs name
	removed  []string
	failWith error
}

func (f *fakeCgroups) Name(n CgroupName) string { return n.ToCgroupfs() }

func (f *fakeCgroups) Ensure(n CgroupName, res *cgroupResources) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failWith != nil {
		return f.failWith
	}
	if f.ensured == nil {
		f.ensured = map[string]*cgroupResources{}
	}
	f.ensured[n.ToCgroupfs()] = res
	return nil
}

func (f *fakeCgroups) Remove(n CgroupName) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.ensured[n.ToCgroupfs()]; ok {
		f.removed = append(f.removed, n.ToCgroupfs())
		delete(f.ensured, n.ToCgroupfs())
	}
	return f.failWith
}

func (f *fakeCgroups) get(name string) (*cgroupResources, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.ensured[name]
	return r, ok
}

func TestCgroupNamesForEachDriver(t *testing.T) {
	t.Parallel()
	uid := types.UID("1234-abcd-5678")
	root := ParseCgroupfsName("/nodekit-test")
	cases := []struct {
		name              string
		cgroup            CgroupName
		cgroupfs, systemd string
	}{
		{"a Guaranteed pod sits directly under kubepods", podCgroupName(root, corev1.PodQOSGuaranteed, uid),
			"/nodekit-test/kubepods/pod1234-abcd-5678",
			"/nodekit_test.slice/nodekit_test-kubepods.slice/nodekit_test-kubepods-pod1234_abcd_5678.slice"},
		{"a Burstable pod sits under kubepods/burstable", podCgroupName(root, corev1.PodQOSBurstable, uid),
			"/nodekit-test/kubepods/burstable/pod1234-abcd-5678",
			"/nodekit_test.slice/nodekit_test-kubepods.slice/nodekit_test-kubepods-burstable.slice/nodekit_test-kubepods-burstable-pod1234_abcd_5678.slice"},
		{"a BestEffort pod under the root cgroup uses the kubelet's own names", podCgroupName(CgroupName{}, corev1.PodQOSBestEffort, uid),
			"/kubepods/besteffort/pod1234-abcd-5678",
			"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1234_abcd_5678.slice"},
		{"the root is / for both drivers", CgroupName{}, "/", "/"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.cgroup.ToCgroupfs(); got != c.cgroupfs {
				t.Errorf("ToCgroupfs = %q, want %q", got, c.cgroupfs)
			}
			if got := c.cgroup.ToSystemd(); got != c.systemd {
				t.Errorf("ToSystemd = %q, want %q", got, c.systemd)
			}
			if len(c.cgroup) > 0 {
				if back := ParseSystemdName(c.systemd); !reflect.DeepEqual(back, c.cgroup) {
					t.Errorf("ParseSystemdName(%q) = %v, want %v", c.systemd, back, c.cgroup)
				}
				if back := ParseCgroupfsName(c.cgroupfs); !reflect.DeepEqual(back, c.cgroup) {
					t.Errorf("ParseCgroupfsName(%q) = %v, want %v", c.cgroupfs, back, c.cgroup)
				}
			}
		})
	}
}

func TestParseCgroupfsNameCleansPaths(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "/", "/": "/", "nodekit": "/nodekit", "/a//b/": "/a/b"} {
		if got := ParseCgroupfsName(in).ToCgroupfs(); got != want {
			t.Errorf("ParseCgroupfsName(%q) = %q, want %q", in, got, want)
		}
	}
}

func quantities(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestPodCgroupResourcesFollowTheKubelet(t *testing.T) {
	t.Parallel()
	i64 := func(v int64) *int64 { return &v }
	withResources := func(rs ...corev1.ResourceRequirements) *corev1.Pod {
		pod := newPod("u1")
		for i, r := range rs {
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: string(rune('a' + i)), Resources: r})
		}
		return pod
	}
	cases := []struct {
		name     string
		pod      *corev1.Pod
		cfsQuota bool
		want     cgroupResources
	}{
		{"a BestEffort pod gets the minimum shares only", withResources(corev1.ResourceRequirements{}), true,
			cgroupResources{CPUShares: i64(2)}},
		{"a Guaranteed pod gets shares, quota and the memory limit summed over containers",
			withResources(
				corev1.ResourceRequirements{Requests: quantities("cpu", "500m", "memory", "64Mi"), Limits: quantities("cpu", "500m", "memory", "64Mi")},
				corev1.ResourceRequirements{Requests: quantities("cpu", "250m", "memory", "32Mi"), Limits: quantities("cpu", "250m", "memory", "32Mi")}),
			true, cgroupResources{CPUShares: i64(768), CPUQuota: i64(75000), CPUPeriod: i64(100000), Memory: i64(96 << 20)}},
		{"a Burstable pod with a container lacking limits gets shares only",
			withResources(
				corev1.ResourceRequirements{Requests: quantities("cpu", "100m"), Limits: quantities("cpu", "200m", "memory", "10Mi")},
				corev1.ResourceRequirements{Requests: quantities("cpu", "100m")}),
			true, cgroupResources{CPUShares: i64(204)}},
		{"a Burstable pod whose containers all limit both gets quota and memory",
			withResources(corev1.ResourceRequirements{Requests: quantities("cpu", "100m", "memory", "5Mi"), Limits: quantities("cpu", "200m", "memory", "10Mi")}),
			true, cgroupResources{CPUShares: i64(102), CPUQuota: i64(20000), CPUPeriod: i64(100000), Memory: i64(10 << 20)}},
		{"pod overhead counts in the pod cgroup (ResourceConfigForPod sums it with the containers)",
			func() *corev1.Pod {
				p := withResources(corev1.ResourceRequirements{Requests: quantities("cpu", "500m", "memory", "64Mi"), Limits: quantities("cpu", "500m", "memory", "64Mi")})
				p.Spec.Overhead = quantities("cpu", "100m", "memory", "10Mi")
				return p
			}(),
			true, cgroupResources{CPUShares: i64(614), CPUQuota: i64(60000), CPUPeriod: i64(100000), Memory: i64(74 << 20)}},
		{"without CFS quota the quota is unlimited",
			withResources(corev1.ResourceRequirements{Requests: quantities("cpu", "1", "memory", "8Mi"), Limits: quantities("cpu", "1", "memory", "8Mi")}),
			false, cgroupResources{CPUShares: i64(1024), CPUQuota: i64(-1), CPUPeriod: i64(100000), Memory: i64(8 << 20)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := podCgroupResources(c.pod, qos.PodClass(c.pod), c.cfsQuota)
			if got.String() != c.want.String() {
				t.Errorf("resources = %s, want %s", got, &c.want)
			}
		})
	}
}

func TestCgroupV1EnsureWritesLimitsAndRemoveCleansEveryHierarchy(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, ctrl := range []string{"cpu", "cpuacct", "memory", "pids", "devices"} {
		if err := os.Mkdir(filepath.Join(root, ctrl), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m := cgroupV1{root: root}
	name := ParseCgroupfsName("/nk/kubepods/burstable/podu1")
	shares, quota, period, mem := int64(512), int64(50000), int64(100000), int64(1<<20)
	if err := m.Ensure(name, &cgroupResources{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, Memory: &mem}); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	for file, want := range map[string]string{
		"cpu/nk/kubepods/burstable/podu1/cpu.shares":               "512",
		"cpu/nk/kubepods/burstable/podu1/cpu.cfs_quota_us":         "50000",
		"cpu/nk/kubepods/burstable/podu1/cpu.cfs_period_us":        "100000",
		"memory/nk/kubepods/burstable/podu1/memory.limit_in_bytes": "1048576",
	} {
		got, err := os.ReadFile(filepath.Join(root, file))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q (%v), want %q", file, got, err, want)
		}
	}
	for _, ctrl := range []string{"cpuacct", "pids"} {
		if _, err := os.Stat(filepath.Join(root, ctrl, "nk/kubepods/burstable/podu1")); err != nil {
			t.Errorf("cgroup not created in %s: %v", ctrl, err)
		}
	}
	// Real cgroupfs directories are removed with rmdir although they list
	// files; here only empty directories can be: drop the written files.
	for _, ctrl := range []string{"cpu", "memory"} {
		files, _ := filepath.Glob(filepath.Join(root, ctrl, "nk/kubepods/burstable/podu1/*"))
		for _, f := range files {
			_ = os.Remove(f)
		}
	}
	// The runtime made the pod's cgroup (and a container below it) in
	// another hierarchy too.
	if err := os.MkdirAll(filepath.Join(root, "devices", "nk/kubepods/burstable/podu1/abc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove(name); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	for _, ctrl := range []string{"cpu", "cpuacct", "memory", "pids", "devices"} {
		if _, err := os.Stat(filepath.Join(root, ctrl, "nk/kubepods/burstable/podu1")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cgroup left in %s: %v", ctrl, err)
		}
		if _, err := os.Stat(filepath.Join(root, ctrl, "nk/kubepods/burstable")); ctrl != "devices" && err != nil {
			t.Errorf("QoS parent removed from %s: %v", ctrl, err)
		}
	}
	if err := m.Remove(name); err != nil {
		t.Errorf("Remove of a missing cgroup: %v", err)
	}
}

func TestCgroupV1EnsureNamesAMissingController(t *testing.T) {
	t.Parallel()
	err := cgroupV1{root: t.TempDir()}.Ensure(ParseCgroupfsName("/nk/podu1"), nil)
	if err == nil || !strings.Contains(err.Error(), "controller cpu not mounted") {
		t.Errorf("Ensure without hierarchies = %v, want a missing controller error", err)
	}
}

// The cgroup v1 files and values of the QoS and pod cgroups, as the
// kubelet writes them through libcontainer's fs manager (cpu.go, memory.go,
// pids.go, hugetlb.go): the values come from
// pkg/kubelet/cm/helpers_linux.go ResourceConfigForPod and
// qos_container_manager_linux.go (Burstable shares summed over its pods,
// BestEffort 2, huge pages 1<<62 on the QoS cgroups).
func TestCgroupV1PodCgroupsPerQoSClassAndBurstableShares(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, ctrl := range []string{"cpu", "cpuacct", "memory", "pids", "hugetlb"} {
		if err := os.Mkdir(filepath.Join(root, ctrl), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := newTestPodCgroups(cgroupV1{root: root}, false, 64)
	b1 := podWith("b-1", corev1.ResourceRequirements{Requests: quantities("cpu", "100m")})
	b2 := podWith("b-2", corev1.ResourceRequirements{Requests: quantities("cpu", "400m", "hugepages-1Gi", "1Gi", "memory", "1Gi"), Limits: quantities("hugepages-1Gi", "1Gi")})
	g := podWith("g-1", corev1.ResourceRequirements{Requests: quantities("cpu", "1", "memory", "1Gi"), Limits: quantities("cpu", "1", "memory", "1Gi")})
	for _, pod := range []*corev1.Pod{b1, b2, g} {
		if err := p.ensure(pod, true); err != nil {
			t.Fatalf("ensure %s: %v", pod.UID, err)
		}
	}
	cpu, mem := filepath.Join(root, "cpu"), filepath.Join(root, "memory")
	checkFiles(t, cpu, "kubepods", map[string]string{"cpu.shares": "2048"})
	checkFiles(t, mem, "kubepods", map[string]string{"memory.limit_in_bytes": "8589934592"})
	checkFiles(t, cpu, "kubepods/burstable", map[string]string{"cpu.shares": "512"}) // 500m
	checkFiles(t, cpu, "kubepods/besteffort", map[string]string{"cpu.shares": "2"})
	checkFiles(t, filepath.Join(root, "hugetlb"), "kubepods/burstable", map[string]string{"hugetlb.2MB.limit_in_bytes": "4611686018427387904"})
	checkFiles(t, cpu, "kubepods/podg-1", map[string]string{"cpu.shares": "1024", "cpu.cfs_quota_us": "100000", "cpu.cfs_period_us": "100000"})
	checkFiles(t, mem, "kubepods/podg-1", map[string]string{"memory.limit_in_bytes": "1073741824"})
	checkFiles(t, filepath.Join(root, "pids"), "kubepods/podg-1", map[string]string{"pids.max": "64"})
	checkFiles(t, cpu, "kubepods/burstable/podb-1", map[string]string{"cpu.shares": "102", "cpu.cfs_quota_us": "<missing>"})
	checkFiles(t, mem, "kubepods/burstable/podb-1", map[string]string{"memory.limit_in_bytes": "<missing>"})
	checkFiles(t, filepath.Join(root, "hugetlb"), "kubepods/burstable/podb-2", map[string]string{
		"hugetlb.1GB.limit_in_bytes": "1073741824", "hugetlb.2MB.limit_in_bytes": "0"})

	// The Burstable pod b-2 goes: its QoS cgroup keeps the shares of b-1.
	files, _ := filepath.Glob(filepath.Join(root, "*", "kubepods/burstable/podb-2", "*"))
	for _, f := range files {
		_ = os.Remove(f)
	}
	if err := p.remove("b-2"); err != nil {
		t.Fatalf("remove: %v", err)
	}
	checkFiles(t, cpu, "kubepods/burstable", map[string]string{"cpu.shares": "102"})
	if _, err := os.Stat(filepath.Join(cpu, "kubepods/burstable/podb-2")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pod cgroup left: %v", err)
	}
}

func TestWithoutCgroupsPerQOSSandboxesGoUnderTheRoot(t *testing.T) {
	t.Parallel()
	no := false
	p := newPodCgroups(Config{CgroupParent: "/nk", CgroupsPerQOS: &no}, logr.Discard())
	fake := &fakeCgroups{}
	p.use(fake)
	pod := podWith("u-1", corev1.ResourceRequirements{Requests: quantities("cpu", "1")})
	if got := p.parentOf(pod); got != "/nk" {
		t.Errorf("sandbox parent = %q, want the root /nk", got)
	}
	if err := p.ensure(pod, true); err != nil || len(fake.ensured) != 0 {
		t.Errorf("ensure made cgroups %v (%v), want none", fake.ensured, err)
	}
	if got := newPodCgroups(Config{CgroupsPerQOS: &no}, logr.Discard()).parentOf(pod); got != "" {
		t.Errorf("sandbox parent without a root = %q, want the runtime's default", got)
	}
}

func TestHostHugePageSizes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"hugepages-2048kB", "hugepages-1048576kB"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sizes, err := hostHugePageSizes(dir)
	if err != nil || !reflect.DeepEqual(sizes, []int64{1 << 30, 2 << 20}) {
		t.Errorf("sizes = %v (%v)", sizes, err)
	}
	if got := hugePageSizeName(2 << 20); got != "2MB" {
		t.Errorf("name of 2Mi = %q", got)
	}
	if sizes, err := hostHugePageSizes(filepath.Join(dir, "none")); err != nil || sizes != nil {
		t.Errorf("no huge pages = %v, %v", sizes, err)
	}
}

// After a restart, a Burstable pod found running (its sandbox is not made
// again) counts in the Burstable QoS cgroup's shares once it is synced, as
// the kubelet's UpdateCgroups sums its active pods.
func TestObserveCountsARunningBurstablePodOnce(t *testing.T) {
	t.Parallel()
	fake := &fakeCgroups{}
	p := newTestPodCgroups(fake, false, 0)
	pod := podWith("b-9", corev1.ResourceRequirements{Requests: quantities("cpu", "300m")})
	p.observe(pod)
	res, ok := fake.get("/kubepods/burstable")
	if !ok || res.CPUShares == nil || *res.CPUShares != 307 {
		t.Fatalf("burstable QoS cgroup = %v (made %v), want 307 shares", res, ok)
	}
	fake.mu.Lock()
	fake.ensured = nil
	fake.mu.Unlock()
	p.observe(pod)
	p.observe(podWith("g-9", corev1.ResourceRequirements{Requests: quantities("cpu", "1", "memory", "1Gi"), Limits: quantities("cpu", "1", "memory", "1Gi")}))
	if _, again := fake.get("/kubepods/burstable"); again {
		t.Errorf("the QoS cgroups were written again for a pod already counted or not Burstable")
	}
}
