package cri

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// fakeUnifiedMount lays out a temp dir as a cgroup v2 mount: the root's
// cgroup.controllers lists what the kernel offers.
func fakeUnifiedMount(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpuset cpu io memory hugetlb pids\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// readCgroupFiles reads rel's files under root; a missing file reads as
// "<missing>".
func readCgroupFiles(t *testing.T, root, rel string, files ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, rel, f))
		switch {
		case errors.Is(err, os.ErrNotExist):
			out[f] = "<missing>"
		case err != nil:
			t.Fatal(err)
		default:
			out[f] = string(b)
		}
	}
	return out
}

func checkFiles(t *testing.T, root, rel string, want map[string]string) {
	t.Helper()
	names := make([]string, 0, len(want))
	for f := range want {
		names = append(names, f)
	}
	got := readCgroupFiles(t, root, rel, names...)
	for f, w := range want {
		if got[f] != w {
			t.Errorf("%s/%s = %q, want %q", rel, f, got[f], w)
		}
	}
}

// newTestPodCgroups is a podCgroups under root "/" (the kubelet's default)
// over mgr, on a node with 2 CPUs, 8 GiB and 2 MiB and 1 GiB huge pages.
func newTestPodCgroups(mgr cgroupManager, v2 bool, pidsLimit int64) *podCgroups {
	p := newPodCgroups(Config{CgroupParent: "/", PodPidsLimit: pidsLimit}, logr.Discard())
	p.memory = func() int64 { return 8 << 30 }
	p.cpus = 2
	p.useHost(mgr, v2, 2<<20, 1<<30)
	return p
}

func podWith(uid string, rs ...corev1.ResourceRequirements) *corev1.Pod {
	pod := newPod(uid)
	pod.UID = types.UID(uid)
	for i, r := range rs {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: string(rune('a' + i)), Resources: r})
	}
	return pod
}

// Expected values: cpu.weight is the kubelet's getCPUWeight of the shares
// (pkg/kubelet/cm/cgroup_manager_linux.go: 1 + (shares-2)*9999/262142);
// shares, quota and memory are ResourceConfigForPod's
// (pkg/kubelet/cm/helpers_linux.go); the QoS cgroups' shares, huge pages
// (1<<62) and memory.low/min resets are qos_container_manager_linux.go's
// Start and UpdateCgroups; kubepods gets the node's capacity
// (node_container_manager_linux.go createNodeAllocatableCgroups); the file
// formats are the kernel's (Documentation/admin-guide/cgroup-v2.rst: cpu.max
// "$MAX $PERIOD", "max" for no limit) as libcontainer's fs2 writes them.
func TestCgroupV2PodCgroupsPerQoSClass(t *testing.T) {
	t.Parallel()
	root := fakeUnifiedMount(t)
	p := newTestPodCgroups(cgroupV2{root: root}, true, 1024)
	guaranteed := podWith("g-1",
		corev1.ResourceRequirements{Requests: quantities("cpu", "500m", "memory", "64Mi"), Limits: quantities("cpu", "500m", "memory", "64Mi")},
		corev1.ResourceRequirements{Requests: quantities("cpu", "250m", "memory", "32Mi"), Limits: quantities("cpu", "250m", "memory", "32Mi")})
	burstable := podWith("b-1", corev1.ResourceRequirements{
		Requests: quantities("cpu", "100m", "memory", "4Mi", "hugepages-2Mi", "4Mi"),
		Limits:   quantities("memory", "4Mi", "hugepages-2Mi", "4Mi")})
	bestEffort := podWith("e-1")
	for _, pod := range []*corev1.Pod{guaranteed, burstable, bestEffort} {
		if err := p.ensure(pod, true); err != nil {
			t.Fatalf("ensure %s: %v", pod.UID, err)
		}
	}
	const all = "+cpuset +cpu +io +memory +hugetlb +pids"
	const unbounded = "4611686018427387904"
	checkFiles(t, root, "", map[string]string{"cgroup.subtree_control": all})
	checkFiles(t, root, "kubepods", map[string]string{
		"cgroup.subtree_control": all, "cpu.weight": "79", "memory.max": "8589934592",
		"memory.min": "0", "memory.low": "0", "cpu.max": "<missing>",
	})
	checkFiles(t, root, "kubepods/burstable", map[string]string{
		"cgroup.subtree_control": all, "cpu.weight": "4", "memory.low": "0",
		"hugetlb.2MB.max": unbounded, "hugetlb.1GB.max": unbounded,
	})
	checkFiles(t, root, "kubepods/besteffort", map[string]string{
		"cgroup.subtree_control": all, "cpu.weight": "1", "memory.low": "<missing>",
		"hugetlb.2MB.max": unbounded, "hugetlb.1GB.max": unbounded,
	})
	checkFiles(t, root, "kubepods/podg-1", map[string]string{
		"cpu.weight": "30", "cpu.max": "75000 100000", "memory.max": "100663296", "pids.max": "1024",
		"hugetlb.2MB.max": "0", "hugetlb.1GB.max": "0", "cgroup.subtree_control": "<missing>",
	})
	// A Burstable pod without cpu limits gets no cpu.max; with memory
	// limits on every container, memory.max; its huge pages, their limit.
	checkFiles(t, root, "kubepods/burstable/podb-1", map[string]string{
		"cpu.weight": "4", "cpu.max": "<missing>", "memory.max": "4194304", "pids.max": "1024",
		"hugetlb.2MB.max": "4194304", "hugetlb.1GB.max": "0", "memory.min": "<missing>", "memory.low": "<missing>",
	})
	checkFiles(t, root, "kubepods/besteffort/pode-1", map[string]string{
		"cpu.weight": "1", "cpu.max": "<missing>", "memory.max": "<missing>", "pids.max": "1024",
	})
}

func TestCgroupV2ResizeAndRemove(t *testing.T) {
	t.Parallel()
	root := fakeUnifiedMount(t)
	m := cgroupV2{root: root}
	name := ParseCgroupfsName("/kubepods/burstable/podr-1")
	if err := m.Ensure(name, &cgroupResources{CPUShares: ptrTo(int64(1024)), CPUQuota: ptrTo(int64(50000)), CPUPeriod: ptrTo(int64(100000)), Memory: ptrTo(int64(64 << 20))}); err != nil {
		t.Fatal(err)
	}
	// The resize: more cpu, no cpu limit (-1 is "max"), less memory.
	if err := m.Ensure(name, &cgroupResources{CPUShares: ptrTo(int64(2048)), CPUQuota: ptrTo(int64(-1)), CPUPeriod: ptrTo(int64(100000)), Memory: ptrTo(int64(32 << 20)), PidsLimit: ptrTo(int64(-1))}); err != nil {
		t.Fatal(err)
	}
	checkFiles(t, root, name.ToCgroupfs(), map[string]string{
		"cpu.weight": "79", "cpu.max": "max 100000", "memory.max": "33554432", "pids.max": "max",
	})
	// rmdir removes a real cgroup with its interface files; a temp dir
	// must be emptied first. The runtime made a container below the pod.
	dir := filepath.Join(root, name.ToCgroupfs())
	if err := os.Mkdir(filepath.Join(dir, "ctr"), 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.*"))
	for _, f := range files {
		_ = os.Remove(f)
	}
	if err := m.Remove(name); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pod cgroup left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "kubepods/burstable")); err != nil {
		t.Errorf("the QoS cgroup went with the pod: %v", err)
	}
	if err := m.Remove(name); err != nil {
		t.Errorf("Remove of a missing cgroup: %v", err)
	}
}

func TestCPUWeightFollowsTheKubelet(t *testing.T) {
	t.Parallel()
	// pkg/kubelet/cm/cgroup_manager_linux.go getCPUWeight, and the ends of
	// the range in Documentation/admin-guide/cgroup-v2.rst (1..10000, 100
	// the default).
	for shares, want := range map[int64]int64{2: 1, 102: 4, 1024: 39, 262144: 10000, 300000: 10000, 0: 1} {
		if got := cpuWeight(shares); got != want {
			t.Errorf("cpuWeight(%d) = %d, want %d", shares, got, want)
		}
	}
}

func TestCgroupV2NeedsAUnifiedMount(t *testing.T) {
	t.Parallel()
	err := cgroupV2{root: t.TempDir()}.Ensure(ParseCgroupfsName("/kubepods"), nil)
	if err == nil || !strings.Contains(err.Error(), "cgroup.controllers") {
		t.Errorf("Ensure without cgroup.controllers = %v, want an error naming it", err)
	}
}
