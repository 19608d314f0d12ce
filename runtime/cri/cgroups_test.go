package cri

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

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
