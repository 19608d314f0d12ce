package nodestatus

import (
	goruntime "runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestHugePagesAreCapacityAndLeaveMemory checks what the kubelet reports
// of huge pages: each page size the kernel has (in
// /sys/kernel/mm/hugepages), 0 when none are reserved, as capacity and
// allocatable, and allocatable memory less their total.
func TestHugePagesAreCapacityAndLeaveMemory(t *testing.T) {
	t.Parallel()
	if goruntime.GOOS != "linux" {
		t.Skip("statfs is read on Linux only")
	}
	files := fullHost()
	files["sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"] = "512\n"
	files["sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"] = "0\n"
	files["sys/kernel/mm/hugepages/hugepages-64kB/other"] = "no count: left out\n"
	m, err := fakeHost(t, files).Info()
	if err != nil {
		t.Fatal(err)
	}
	want := map[corev1.ResourceName]string{"hugepages-2Mi": "1Gi", "hugepages-1Gi": "0"}
	if len(m.HugePages) != len(want) {
		t.Fatalf("huge pages %v, want %v", m.HugePages, want)
	}
	node := &corev1.Node{}
	setCapacity(node, Config{NodeName: "n"}.withDefaults(), m)
	for name, q := range want {
		for what, list := range map[string]corev1.ResourceList{"capacity": node.Status.Capacity, "allocatable": node.Status.Allocatable} {
			if got, ok := list[name]; !ok || got.Cmp(resource.MustParse(q)) != 0 {
				t.Errorf("%s %s = %v, want %s", what, name, got.String(), q)
			}
		}
	}
	memCap, memAlloc := node.Status.Capacity[corev1.ResourceMemory], node.Status.Allocatable[corev1.ResourceMemory]
	memCap.Sub(resource.MustParse("1Gi"))
	if memAlloc.Cmp(memCap) != 0 {
		t.Errorf("memory allocatable %s, want capacity less 1Gi of huge pages", memAlloc.String())
	}
}

// TestNoHugePagesDirectory checks a kernel without huge pages: none listed.
func TestNoHugePagesDirectory(t *testing.T) {
	t.Parallel()
	if goruntime.GOOS != "linux" {
		t.Skip("statfs is read on Linux only")
	}
	m, err := fakeHost(t, fullHost()).Info()
	if err != nil {
		t.Fatal(err)
	}
	if m.HugePages != nil {
		t.Errorf("huge pages %v, want none", m.HugePages)
	}
}
