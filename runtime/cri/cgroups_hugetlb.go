package cri

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// DefaultHugePagesDir lists the host's huge page sizes, one
// hugepages-<size>kB directory each.
const DefaultHugePagesDir = "/sys/kernel/mm/hugepages"

// hugePageUnlimited is the hugetlb limit the kubelet gives the QoS cgroups
// for every page size (qos_container_manager_linux.go setHugePagesUnbounded).
const hugePageUnlimited = int64(1) << 62

// hostHugePageSizes lists the page sizes (in bytes) of the host's huge
// pages from dir; a host without huge pages has none.
func hostHugePageSizes(dir string) ([]int64, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list huge page sizes in %s: %w", dir, err)
	}
	var sizes []int64
	for _, e := range entries {
		kb, ok := strings.CutPrefix(e.Name(), "hugepages-")
		if !ok {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(kb, "kB"), 10, 64)
		if err != nil || !strings.HasSuffix(kb, "kB") {
			return nil, fmt.Errorf("huge page size %q in %s: not <n>kB", e.Name(), dir)
		}
		sizes = append(sizes, v<<10)
	}
	return sizes, nil
}

// hugePageSizeName spells a page size as the hugetlb controller's files
// do (hugetlb.2MB.limit_in_bytes, hugetlb.1GB.max): the largest of KB, MB,
// GB and so on that divides it.
func hugePageSizeName(size int64) string {
	units := []string{"B", "KB", "MB", "GB", "TB", "PB"}
	i := 0
	for size >= 1024 && size%1024 == 0 && i < len(units)-1 {
		size /= 1024
		i++
	}
	return strconv.FormatInt(size, 10) + units[i]
}

// podHugePageLimits is the kubelet's hugetlb limit of a pod cgroup: the
// pod's hugepages-<size> requests summed per page size, and 0 for each page
// size of the host the pod does not ask for (helpers_linux.go HugePageLimits
// and cgroup_manager_linux.go maybeSetHugetlb).
func podHugePageLimits(requests corev1.ResourceList, hostSizes []int64) map[int64]int64 {
	out := map[int64]int64{}
	for _, size := range hostSizes {
		out[size] = 0
	}
	for name, q := range requests {
		size, ok := strings.CutPrefix(string(name), corev1.ResourceHugePagesPrefix)
		if !ok {
			continue
		}
		qs, err := resource.ParseQuantity(size)
		if err != nil || qs.Value() <= 0 {
			continue // admission refuses a malformed huge page size
		}
		out[qs.Value()] += q.Value()
	}
	return out
}

// unlimitedHugePages is the QoS cgroups' hugetlb limit: unbounded for each
// of the host's page sizes.
func unlimitedHugePages(hostSizes []int64) map[int64]int64 {
	out := make(map[int64]int64, len(hostSizes))
	for _, size := range hostSizes {
		out[size] = hugePageUnlimited
	}
	return out
}
