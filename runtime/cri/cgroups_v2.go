package cri

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroupV2 manages cgroupfs cgroups on cgroup v2 (the unified hierarchy):
// one directory per cgroup, <root>/<path>, whose controllers are enabled
// through each parent's cgroup.subtree_control. It keeps no state, so it is
// safe for concurrent use.
type cgroupV2 struct {
	root string
}

var _ cgroupManager = cgroupV2{}

// Name implements cgroupManager: the cgroupfs path.
func (cgroupV2) Name(n CgroupName) string { return n.ToCgroupfs() }

// Ensure implements cgroupManager: it creates the cgroup and its parents,
// enabling the root's controllers on the way down, and writes the limits.
func (m cgroupV2) Ensure(n CgroupName, res *cgroupResources) error {
	return m.ensureAt(n.ToCgroupfs(), res)
}

// ensureAt is Ensure for a cgroupfs path (the systemd driver's slices
// have a path of their own).
func (m cgroupV2) ensureAt(rel string, res *cgroupResources) error {
	if err := m.create(rel); err != nil {
		return fmt.Errorf("create cgroup %s: %w", rel, err)
	}
	dir := filepath.Join(m.root, rel)
	for _, f := range cgroupV2Files(res) {
		if err := writeCgroupFile(dir, f.file, f.value); err != nil {
			return fmt.Errorf("cgroup %s: %w", rel, err)
		}
		if f.rsvd == "" {
			continue
		}
		// Kernels since 5.7 also account reservations; libcontainer's fs2
		// hugetlb.go sets their limit too when the file exists.
		if _, err := os.Stat(filepath.Join(dir, f.rsvd)); err == nil {
			if err := writeCgroupFile(dir, f.rsvd, f.value); err != nil {
				return fmt.Errorf("cgroup %s: %w", rel, err)
			}
		}
	}
	return nil
}

// create makes the cgroup's directories from the root down, as
// libcontainer's fs2.CreateCgroupPath does: every controller the root
// offers (its cgroup.controllers) is enabled in the subtree_control of the
// root and of each parent, all at once or, when the kernel refuses the
// line, one by one (a controller that cannot be enabled fails later, at
// the write of its limit).
func (m cgroupV2) create(rel string) error {
	offered, err := os.ReadFile(filepath.Join(m.root, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("read the controllers of %s: %w", m.root, err)
	}
	var enable []string
	for _, c := range strings.Fields(string(offered)) {
		enable = append(enable, "+"+c)
	}
	current := m.root
	parts := ParseCgroupfsName(rel)
	for i := 0; i <= len(parts); i++ {
		if i > 0 {
			current = filepath.Join(current, parts[i-1])
			if err := os.Mkdir(current, 0o755); err != nil && !os.IsExist(err) {
				return err
			}
		}
		if i == len(parts) || len(enable) == 0 {
			continue
		}
		ctl := filepath.Join(current, "cgroup.subtree_control")
		if os.WriteFile(ctl, []byte(strings.Join(enable, " ")), 0o644) == nil {
			continue
		}
		for _, c := range enable {
			_ = os.WriteFile(ctl, []byte(c), 0o644)
		}
	}
	return nil
}

// cgroupV2File is one file of a cgroup v2 cgroup; rsvd names the
// reservation twin of a hugetlb limit.
type cgroupV2File struct{ file, value, rsvd string }

// cgroupV2Files are the files of res in the order libcontainer's fs2
// manager writes them (fs2.go Set: pids, memory, cpu, hugetlb, then the
// unified files): pids.max and memory.max with "max" for -1, cpu.weight
// converted from the shares, cpu.max as "<quota|max> <period>".
func cgroupV2Files(res *cgroupResources) []cgroupV2File {
	if res == nil {
		return nil
	}
	var out []cgroupV2File
	if p := res.PidsLimit; p != nil {
		out = append(out, cgroupV2File{file: "pids.max", value: limitValue(*p)})
	}
	if m := res.Memory; m != nil {
		out = append(out, cgroupV2File{file: "memory.max", value: limitValue(*m)})
	}
	if s := res.CPUShares; s != nil {
		out = append(out, cgroupV2File{file: "cpu.weight", value: strconv.FormatInt(cpuWeight(*s), 10)})
	}
	if v, ok := cpuMax(res.CPUQuota, res.CPUPeriod); ok {
		out = append(out, cgroupV2File{file: "cpu.max", value: v})
	}
	for _, size := range sortedKeys(res.HugePageLimit) {
		name := "hugetlb." + hugePageSizeName(size)
		out = append(out, cgroupV2File{file: name + ".max", value: strconv.FormatInt(res.HugePageLimit[size], 10), rsvd: name + ".rsvd.max"})
	}
	for _, k := range sortedKeys(res.Unified) {
		out = append(out, cgroupV2File{file: k, value: res.Unified[k]})
	}
	return out
}

// cpuMax is the cpu.max line of a quota and period, as libcontainer's
// fs2/cpu.go writes it: the quota or "max" when it is unlimited, then the
// period; ok is false when neither is set.
func cpuMax(quota, period *int64) (string, bool) {
	if quota == nil && period == nil {
		return "", false
	}
	v := "max"
	if quota != nil && *quota > 0 {
		v = strconv.FormatInt(*quota, 10)
	}
	if period != nil && *period != 0 {
		v += " " + strconv.FormatInt(*period, 10)
	}
	return v, true
}

// cpuWeight converts cpu shares ([2, 262144]) to a cgroup v2 cpu.weight
// ([1, 10000]) with the kubelet's linear formula (cgroup_manager_linux.go
// getCPUWeight), which the kubelet uses for pod and QoS cgroups whatever
// runtime it drives. (runc and crun switched to a quadratic conversion for
// containers, opencontainers/cgroups ConvertCPUSharesToCgroupV2Value; the
// kubelet's pod cgroups still get this one.)
func cpuWeight(shares int64) int64 {
	if shares >= maxShares {
		return 10000
	}
	shares = max(shares, minShares)
	return 1 + ((shares-2)*9999)/262142
}

// Remove implements cgroupManager: it removes the cgroup after the empty
// cgroups below it.
func (m cgroupV2) Remove(n CgroupName) error { return m.removeAt(n.ToCgroupfs()) }

// removeAt is Remove for a cgroupfs path.
func (m cgroupV2) removeAt(rel string) error {
	if err := removeCgroupDir(filepath.Join(m.root, rel)); err != nil {
		return fmt.Errorf("remove cgroup %s: %w", rel, err)
	}
	return nil
}
