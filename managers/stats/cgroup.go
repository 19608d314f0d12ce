package stats

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// cgroupStats are one cgroup's CPU and memory figures, as cadvisor reads
// them for the kubelet.
type cgroupStats struct {
	// cpuUsageNanos is the cumulative CPU time in nanoseconds.
	cpuUsageNanos uint64
	// memUsage is the memory usage (cgroup v1 memory.usage_in_bytes, v2
	// memory.current).
	memUsage uint64
	// workingSet is memUsage minus the inactive file pages, floored at 0.
	workingSet uint64
	// rss, pageFaults, majorPageFaults come from memory.stat.
	rss, pageFaults, majorPageFaults uint64
	// limit is the memory limit; 0 when unlimited.
	limit uint64
	// pids is pids.current, nil where the pids controller is not there.
	pids *uint64
	// cpuPSI, memoryPSI and ioPSI are the cgroup's pressure stall
	// figures (cgroup v2 on a kernel with PSI), nil without.
	cpuPSI, memoryPSI, ioPSI *statsapi.PSIStats
	// io is io.stat, one entry per device (cgroup v2).
	io []ioDeviceStats
}

// cgroupReader reads cgroup figures under one cgroupfs mount.
type cgroupReader struct {
	root string // e.g. /sys/fs/cgroup
}

// v2 reports whether the mount is the unified hierarchy.
func (c cgroupReader) v2() bool {
	_, err := os.Stat(filepath.Join(c.root, "cgroup.controllers"))
	return err == nil
}

// read returns the figures of the cgroup at path (a cgroupfs name such as
// /nodekit/kubepods/pod<uid>; "/" is the root). It fails when the cgroup
// does not exist.
func (c cgroupReader) read(path string) (cgroupStats, error) {
	if c.v2() {
		return c.readV2(path)
	}
	return c.readV1(path)
}

// readV1 reads cpuacct.usage and the memory controller's files. The
// working set is memory.usage_in_bytes - total_inactive_file, as cadvisor
// computes it.
func (c cgroupReader) readV1(path string) (cgroupStats, error) {
	var s cgroupStats
	var err error
	cpuDir := filepath.Join(c.root, "cpuacct", path)
	if _, statErr := os.Stat(cpuDir); statErr != nil {
		cpuDir = filepath.Join(c.root, "cpu,cpuacct", path)
	}
	if s.cpuUsageNanos, err = readUint(filepath.Join(cpuDir, "cpuacct.usage")); err != nil {
		return s, err
	}
	memDir := filepath.Join(c.root, "memory", path)
	if s.memUsage, err = readUint(filepath.Join(memDir, "memory.usage_in_bytes")); err != nil {
		return s, err
	}
	stat, err := readKeyValues(filepath.Join(memDir, "memory.stat"))
	if err != nil {
		return s, err
	}
	s.workingSet = sub(s.memUsage, stat["total_inactive_file"])
	s.rss = stat["total_rss"]
	s.pageFaults = stat["total_pgfault"]
	s.majorPageFaults = stat["total_pgmajfault"]
	if limit, err := readUint(filepath.Join(memDir, "memory.limit_in_bytes")); err == nil && !unlimited(limit) {
		s.limit = limit
	}
	if n, err := readUint(filepath.Join(c.root, "pids", path, "pids.current")); err == nil {
		s.pids = &n
	}
	return s, nil
}

// unlimited reports whether a memory limit means "no limit": cgroup v1
// writes a page-aligned huge number, v2 "max" (read as MaxUint64).
func unlimited(limit uint64) bool {
	return limit >= math.MaxInt64/2
}

// readUint reads a file holding one unsigned number ("max" reads as
// MaxUint64).
func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v := strings.TrimSpace(string(b))
	if v == "max" {
		return math.MaxUint64, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", path, err)
	}
	return n, nil
}

// readKeyValues reads a file of "key value" lines (memory.stat, cpu.stat);
// lines that do not parse are skipped.
func readKeyValues(path string) (map[string]uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := make(map[string]uint64, 48)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

// sub is a - b floored at 0.
func sub(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}
