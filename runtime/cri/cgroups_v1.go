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

// cgroupV1Controllers are the cgroup v1 controllers in which a pod cgroup is
// created with its limits; the runtime creates the others for containers.
var cgroupV1Controllers = []string{"cpu", "cpuacct", "memory", "pids"}

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
// cpuacct, memory and pids hierarchies and writes the limits.
func (m cgroupV1) Ensure(n CgroupName, res *cgroupResources) error {
	rel := n.ToCgroupfs()
	for _, ctrl := range cgroupV1Controllers {
		mount := filepath.Join(m.root, ctrl)
		if _, err := os.Stat(mount); err != nil {
			if ctrl == "pids" && errors.Is(err, fs.ErrNotExist) {
				continue // an old kernel without the pids controller
			}
			return fmt.Errorf("cgroup %s: controller %s not mounted under %s: %w", rel, ctrl, m.root, err)
		}
		if err := os.MkdirAll(filepath.Join(mount, rel), 0o755); err != nil {
			return fmt.Errorf("create cgroup %s (%s): %w", rel, ctrl, err)
		}
	}
	if res == nil {
		return nil
	}
	files := []struct {
		ctrl, file string
		value      *int64
	}{
		{"cpu", "cpu.shares", res.CPUShares},
		// The period first: a quota is checked against the current period.
		{"cpu", "cpu.cfs_period_us", res.CPUPeriod},
		{"cpu", "cpu.cfs_quota_us", res.CPUQuota},
		{"memory", "memory.limit_in_bytes", res.Memory},
	}
	for _, f := range files {
		if f.value == nil {
			continue
		}
		p := filepath.Join(m.root, f.ctrl, rel, f.file)
		if err := os.WriteFile(p, []byte(strconv.FormatInt(*f.value, 10)), 0o644); err != nil {
			return fmt.Errorf("set %s of cgroup %s to %d: %w", f.file, rel, *f.value, err)
		}
	}
	return nil
}

// Remove implements cgroupManager: it removes the cgroup from every
// mounted hierarchy (the runtime may have created it in the others), after
// the empty cgroups below it.
func (m cgroupV1) Remove(n CgroupName) error {
	rel := n.ToCgroupfs()
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
