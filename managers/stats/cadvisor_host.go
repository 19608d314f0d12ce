package stats

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/nodekit/nodekit/internal/mount"
)

// cgroupSpec is a cgroup's limits as cadvisor's container spec gives them:
// CFS quota and period in microseconds (0 when unset), CPU shares, and the
// memory limit (0 when unlimited).
type cgroupSpec struct {
	quota, period, shares, memoryLimit uint64
	hasCPU, hasMemory                  bool
}

// spec reads the limits of the cgroup at path. On cgroup v1: cpu.cfs_quota_us
// (-1 is no quota), cpu.cfs_period_us, cpu.shares, memory.limit_in_bytes. On
// cgroup v2: cpu.max ("max 100000" or "50000 100000"), cpu.weight turned
// back into shares with the inverse of the linear mapping runc writes
// (shares = 2 + (weight-1) * 262142 / 9999, as cadvisor does), memory.max.
// A file that cannot be read leaves its figure out.
func (c cgroupReader) spec(path string) cgroupSpec {
	var s cgroupSpec
	if c.v2() {
		dir := filepath.Join(c.root, path)
		if b, err := os.ReadFile(filepath.Join(dir, "cpu.max")); err == nil {
			s.hasCPU = true
			if q, per, ok := strings.Cut(strings.TrimSpace(string(b)), " "); ok {
				if q != "max" {
					s.quota, _ = strconv.ParseUint(q, 10, 64)
				}
				s.period, _ = strconv.ParseUint(per, 10, 64)
			}
		}
		if w, err := readUint(filepath.Join(dir, "cpu.weight")); err == nil && w >= 1 && w <= 10000 {
			s.hasCPU = true
			s.shares = 2 + (w-1)*262142/9999
		}
		if m, err := readUint(filepath.Join(dir, "memory.max")); err == nil {
			s.hasMemory = true
			if !unlimited(m) {
				s.memoryLimit = m
			}
		}
		return s
	}
	cpuDir := filepath.Join(c.root, "cpu", path)
	if _, err := os.Stat(cpuDir); err != nil {
		cpuDir = filepath.Join(c.root, "cpu,cpuacct", path)
	}
	if b, err := os.ReadFile(filepath.Join(cpuDir, "cpu.cfs_quota_us")); err == nil {
		if q, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && q > 0 {
			s.quota = uint64(q)
		}
	}
	if per, err := readUint(filepath.Join(cpuDir, "cpu.cfs_period_us")); err == nil {
		s.hasCPU, s.period = true, per
	}
	if sh, err := readUint(filepath.Join(cpuDir, "cpu.shares")); err == nil {
		s.hasCPU, s.shares = true, sh
	}
	if m, err := readUint(filepath.Join(c.root, "memory", path, "memory.limit_in_bytes")); err == nil {
		s.hasMemory = true
		if !unlimited(m) {
			s.memoryLimit = m
		}
	}
	return s
}

// machine is what cadvisor's machine_* metrics say of the host.
type machine struct {
	cores                       int
	memory                      uint64
	bootID, machineID, systemID string
}

// machine reads the number of logical CPUs (processor lines of
// /proc/cpuinfo, else the CPUs the agent may run on), MemTotal, and the
// labels cadvisor puts on machine_* metrics: the boot ID, /etc/machine-id
// and the DMI product UUID (each "" when it cannot be read; the last is
// readable by root only).
func (h host) machine() machine {
	m := machine{cores: runtime.NumCPU()}
	if b, err := os.ReadFile(filepath.Join(h.proc, "cpuinfo")); err == nil {
		n := 0
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if k, _, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "processor" {
				n++
			}
		}
		if n > 0 {
			m.cores = n
		}
	}
	if mi, err := h.memInfo(); err == nil {
		m.memory = mi["MemTotal"]
	}
	m.bootID = readTrimmed(filepath.Join(h.proc, "sys/kernel/random/boot_id"))
	m.machineID = readTrimmed("/etc/machine-id")
	m.systemID = readTrimmed("/sys/class/dmi/id/product_uuid")
	return m
}

// readTrimmed is the file's content without surrounding space; "" when it
// cannot be read.
func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// mountDevices maps mount points to their source devices, from
// /proc/self/mountinfo; deviceOf finds the device of the filesystem that
// holds a path.
type mountDevices map[string]string

// readMounts reads the agent's mount table; empty when it cannot.
func (h host) readMounts() mountDevices {
	out := mountDevices{}
	b, err := os.ReadFile(filepath.Join(h.proc, "self", "mountinfo"))
	if err != nil {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// id parent maj:min root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 2 {
			continue
		}
		out[mount.UnescapePath(f[4])] = g[1]
	}
	return out
}

// deviceOf returns the source of the longest mount point holding path;
// path itself when none does.
func (m mountDevices) deviceOf(path string) string {
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if dev, ok := m[p]; ok {
			return dev
		}
		if p == "/" || p == "." {
			return path
		}
	}
}

// blockDevice names the block device major:minor as cadvisor does
// (/dev/ and the DEVNAME of its sysfs uevent); "" when sysfs does not know
// it.
func (h host) blockDevice(major, minor uint64) string {
	b, err := os.ReadFile(filepath.Join(h.sys, "dev", "block", strconv.FormatUint(major, 10)+":"+strconv.FormatUint(minor, 10), "uevent"))
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "DEVNAME="); ok {
			return "/dev/" + v
		}
	}
	return ""
}
