package cri

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// CgroupName is a cgroup named independently of the cgroup driver, as its
// components from the root: {"nodekit", "kubepods", "burstable",
// "pod<uid>"}. It is the kubelet's cm.CgroupName; ToCgroupfs and ToSystemd
// spell it for each driver.
type CgroupName []string

// Cgroup layout under Config.CgroupParent, as the kubelet has it.
const (
	kubepodsCgroup   = "kubepods"
	burstableCgroup  = "burstable"
	bestEffortCgroup = "besteffort"
	podCgroupPrefix  = "pod"
	systemdSuffix    = ".slice"
)

// ParseCgroupfsName turns a cgroupfs path ("/nodekit/kubepods") into a
// CgroupName; "" and "/" are the root (no components).
func ParseCgroupfsName(name string) CgroupName {
	name = strings.Trim(path.Clean("/"+name), "/")
	if name == "" {
		return CgroupName{}
	}
	return CgroupName(strings.Split(name, "/"))
}

// Child returns n extended by components; n is not changed.
func (n CgroupName) Child(components ...string) CgroupName {
	return append(append(CgroupName{}, n...), components...)
}

// ToCgroupfs spells the name for the cgroupfs driver: "/a/b/c".
func (n CgroupName) ToCgroupfs() string {
	return "/" + path.Join(n...)
}

// ToSystemd spells the name for the systemd driver as the expanded slice
// path, each component's dashes turned into underscores:
// {"kubepods", "burstable", "pod12-34"} becomes
// "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod12_34.slice".
// The root is "/".
func (n CgroupName) ToSystemd() string {
	if len(n) == 0 || (len(n) == 1 && n[0] == "") {
		return "/"
	}
	var b strings.Builder
	prefix := ""
	for _, part := range n {
		prefix += strings.ReplaceAll(part, "-", "_")
		b.WriteString("/" + prefix + systemdSuffix)
		prefix += "-"
	}
	return b.String()
}

// ParseSystemdName turns a systemd slice (its last path element, such as
// "kubepods-burstable-pod12_34.slice") back into a CgroupName.
func ParseSystemdName(name string) CgroupName {
	base := strings.TrimSuffix(path.Base(name), systemdSuffix)
	if base == "" || base == "/" || base == "-" {
		return CgroupName{}
	}
	var out CgroupName
	for _, part := range strings.Split(base, "-") {
		out = append(out, strings.ReplaceAll(part, "_", "-"))
	}
	return out
}

// podCgroupName is the pod's cgroup under root: the kubelet's
// kubepods/pod<uid> for Guaranteed pods and kubepods/<qos>/pod<uid> for
// Burstable and BestEffort ones.
func podCgroupName(root CgroupName, class corev1.PodQOSClass, uid types.UID) CgroupName {
	return qosCgroupName(root, class).Child(podCgroupPrefix + string(uid))
}

// qosCgroupName is the parent cgroup of the pods of one QoS class.
func qosCgroupName(root CgroupName, class corev1.PodQOSClass) CgroupName {
	kubepods := root.Child(kubepodsCgroup)
	switch class {
	case corev1.PodQOSBurstable:
		return kubepods.Child(burstableCgroup)
	case corev1.PodQOSBestEffort:
		return kubepods.Child(bestEffortCgroup)
	}
	return kubepods
}

// allPodCgroupNames lists where a pod's cgroup may be, whatever its class:
// garbage collection no longer knows the spec.
func allPodCgroupNames(root CgroupName, uid types.UID) []CgroupName {
	classes := []corev1.PodQOSClass{corev1.PodQOSGuaranteed, corev1.PodQOSBurstable, corev1.PodQOSBestEffort}
	out := make([]CgroupName, 0, len(classes))
	for _, c := range classes {
		out = append(out, podCgroupName(root, c, uid))
	}
	return out
}

// cgroupResources are the limits written to a cgroup (the kubelet's
// cm.ResourceConfig); nil fields are left as they are.
type cgroupResources struct {
	// CPUShares is cpu.shares on cgroup v1; cgroup v2 and systemd get the
	// weight converted from it (cpuWeight).
	CPUShares *int64
	// CPUQuota and CPUPeriod are the CFS quota and period in microseconds;
	// a quota of -1 is unlimited.
	CPUQuota, CPUPeriod *int64
	// Memory is the memory limit in bytes.
	Memory *int64
	// PidsLimit is the process limit; -1 is unlimited ("max").
	PidsLimit *int64
	// HugePageLimit is the hugetlb limit in bytes by page size in bytes;
	// a page size of the host not in the map is left as it is.
	HugePageLimit map[int64]int64
	// Unified are cgroup v2 files written as they are (the kubelet's
	// ResourceConfig.Unified); only the cgroup v2 managers use them.
	Unified map[string]string
}

// String describes the limits for logs and errors.
func (r *cgroupResources) String() string {
	if r == nil {
		return ""
	}
	var parts []string
	add := func(name string, v *int64) {
		if v != nil {
			parts = append(parts, fmt.Sprintf("%s=%d", name, *v))
		}
	}
	add("cpuShares", r.CPUShares)
	add("cpuQuota", r.CPUQuota)
	add("cpuPeriod", r.CPUPeriod)
	add("memory", r.Memory)
	add("pids", r.PidsLimit)
	for _, size := range sortedKeys(r.HugePageLimit) {
		parts = append(parts, fmt.Sprintf("hugetlb.%s=%d", hugePageSizeName(size), r.HugePageLimit[size]))
	}
	for _, k := range sortedKeys(r.Unified) {
		parts = append(parts, fmt.Sprintf("%s=%s", k, r.Unified[k]))
	}
	return strings.Join(parts, " ")
}

// sortedKeys returns m's keys in order.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// cgroupManager creates, updates and removes cgroups of one cgroup driver
// and version: cgroupV1 and cgroupV2 (cgroupfs) and systemdCgroups.
// Methods must be safe for concurrent use.
type cgroupManager interface {
	// Name spells a cgroup name as the runtime expects it in CgroupParent.
	Name(n CgroupName) string
	// Ensure creates the cgroup (and its parents) when missing and writes
	// res into it; on an existing cgroup it updates the limits (a resize).
	Ensure(n CgroupName, res *cgroupResources) error
	// Remove removes the cgroup, and empty cgroups below it; a cgroup that
	// does not exist is not an error. It fails while processes remain.
	Remove(n CgroupName) error
}
