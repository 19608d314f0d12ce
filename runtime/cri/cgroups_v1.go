package cri

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// DefaultCgroupfsRoot is where the cgroup hierarchies are mounted.
const DefaultCgroupfsRoot = "/sys/fs/cgroup"

// cgroupV1Controllers are the cgroup v1 controllers in which a pod or QoS
// cgroup is created with its limits; the runtime creates the others for
// containers. pids and hugetlb may be missing (not mounted).
var cgroupV1Controllers = []string{"cpu", "cpuacct", "memory", "pids", "hugetlb"}

// cgroupV1Optional are the controllers of cgroupV1Controllers a host may
// lack: the kubelet too skips them (cgroup_manager_linux.go).
var cgroupV1Optional = map[string]bool{"pids": true, "hugetlb": true}

// cgroupV1 manages cgroupfs cgroups on cgroup v1: one directory per
// controller hierarchy, <root>/<controller>/<path>. It keeps no state, so it
// is safe for concurrent use.
type cgroupV1 struct {
	root string
}

var _ cgroupManager = cgroupV1{}

// isCgroupV2 reports whether root is a cgroup v2 (unified) mount.
func isCgroupV2(root string) bool {
	_, err := os.Stat(filepath.Join(root, "cgroup.controllers"))
	return err == nil
}

// Name implements cgroupManager: the cgroupfs path.
func (cgroupV1) Name(n CgroupName) string { return n.ToCgroupfs() }

// Ensure implements cgroupManager: it creates the cgroup in the cpu,
// cpuacct, memory, pids and hugetlb hierarchies and writes the limits.
func (m cgroupV1) Ensure(n CgroupName, res *cgroupResources) error {
	return m.ensureAt(n.ToCgroupfs(), res)
}

// ensureAt is Ensure for a cgroupfs path (the systemd driver's slices
// have a path of their own).
func (m cgroupV1) ensureAt(rel string, res *cgroupResources) error {
	mounted := map[string]bool{}
	for _, ctrl := range cgroupV1Controllers {
		mount := filepath.Join(m.root, ctrl)
		if _, err := os.Stat(mount); err != nil {
			if cgroupV1Optional[ctrl] && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return fmt.Errorf("cgroup %s: controller %s not mounted under %s: %w", rel, ctrl, m.root, err)
		}
		mounted[ctrl] = true
		if err := os.MkdirAll(filepath.Join(mount, rel), 0o755); err != nil {
			return fmt.Errorf("create cgroup %s (%s): %w", rel, ctrl, err)
		}
	}
	for _, f := range cgroupV1Files(res) {
		if !mounted[f.ctrl] {
			continue // a limit of a controller the host lacks, as the kubelet
		}
		if err := writeCgroupFile(filepath.Join(m.root, f.ctrl, rel), f.file, f.value); err != nil {
			return fmt.Errorf("cgroup %s: %w", rel, err)
		}
	}
	return nil
}

// cgroupFile is one value to write into one controller's file.
type cgroupFile struct{ ctrl, file, value string }

// cgroupV1Files are the files of res in the order libcontainer's fs
// manager writes them (cpu.go: shares, then the period before the quota,
// which the kernel checks against it; memory.go; pids.go, where -1 is
// "max"; hugetlb.go).
func cgroupV1Files(res *cgroupResources) []cgroupFile {
	if res == nil {
		return nil
	}
	var out []cgroupFile
	add := func(ctrl, file string, v *int64) {
		if v != nil {
			out = append(out, cgroupFile{ctrl, file, strconv.FormatInt(*v, 10)})
		}
	}
	add("cpu", "cpu.shares", res.CPUShares)
	add("cpu", "cpu.cfs_period_us", res.CPUPeriod)
	add("cpu", "cpu.cfs_quota_us", res.CPUQuota)
	add("memory", "memory.limit_in_bytes", res.Memory)
	if p := res.PidsLimit; p != nil {
		out = append(out, cgroupFile{"pids", "pids.max", limitValue(*p)})
	}
	for _, size := range sortedKeys(res.HugePageLimit) {
		add("hugetlb", "hugetlb."+hugePageSizeName(size)+".limit_in_bytes", ptrTo(res.HugePageLimit[size]))
	}
	return out
}

// pidsMax spells a process limit for pids.max: "max" when unlimited.
func limitValue(limit int64) string {
	if limit <= 0 {
		return "max"
	}
	return strconv.FormatInt(limit, 10)
}

// ptrTo returns a pointer to v.
func ptrTo[T any](v T) *T { return &v }

// writeCgroupFile writes one cgroup file.
func writeCgroupFile(dir, file, value string) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
		return fmt.Errorf("set %s to %s: %w", file, value, err)
	}
	return nil
}

// Remove implements cgroupManager: it removes the cgroup from every
// mounted hierarchy (the runtime may have created it in the others), after
// the empty cgroups below it.
func (m cgroupV1) Remove(n CgroupName) error { return m.removeAt(n.ToCgroupfs()) }

// removeAt is Remove for a cgroupfs path.
func (m cgroupV1) removeAt(rel string) error {
	mounts, err := os.ReadDir(m.root)
	if err != nil {
		return fmt.Errorf("remove cgroup %s: list hierarchies: %w", rel, err)
	}
	var errs []error
	for _, e := range mounts {
		if !e.IsDir() { // skips the cpu,cpuacct-style symlinks: their target is listed too
			continue
		}
		if err := removeCgroupDir(filepath.Join(m.root, e.Name(), rel)); err != nil {
			errs = append(errs, fmt.Errorf("remove cgroup %s (%s): %w", rel, e.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// removeCgroupDir removes a cgroup directory and the cgroups below it,
// deepest first. cgroupfs directories are removed with rmdir even though
// they list files.
func removeCgroupDir(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	for _, d := range dirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
