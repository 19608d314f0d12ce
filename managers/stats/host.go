package stats

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// defaultInterface is the interface whose counters the kubelet copies into
// NetworkStats' own fields.
const defaultInterface = "eth0"

// host reads the node's own figures from procfs, the root cgroup and
// statfs.
type host struct {
	proc    string
	sys     string // where sysfs is mounted
	cgroups cgroupReader
}

// bootTime is the host's boot time (btime in /proc/stat), the node's
// StartTime as cadvisor's root container reports it.
func (h host) bootTime() (time.Time, error) {
	b, err := os.ReadFile(filepath.Join(h.proc, "stat"))
	if err != nil {
		return time.Time{}, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("parse btime: %w", err)
			}
			return time.Unix(n, 0), nil
		}
	}
	return time.Time{}, fmt.Errorf("no btime in %s", filepath.Join(h.proc, "stat"))
}

// memInfo returns /proc/meminfo's values in bytes.
func (h host) memInfo() (map[string]uint64, error) {
	b, err := os.ReadFile(filepath.Join(h.proc, "meminfo"))
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		out[k] = n
	}
	return out, nil
}

// nodeCgroup reads the root cgroup and the capacity (MemTotal). On cgroup
// v2 the root's memory figures come from its memory.stat (see readV2Root);
// on a kernel whose v2 root has no memory.stat, from /proc/meminfo (usage
// MemTotal - MemFree, working set that minus Inactive(file)).
func (h host) nodeCgroup() (cgroupStats, uint64, error) {
	mi, err := h.memInfo()
	if err != nil {
		return cgroupStats{}, 0, fmt.Errorf("read meminfo: %w", err)
	}
	capacity := mi["MemTotal"]
	if !h.cgroups.v2() {
		s, err := h.cgroups.readV1("/")
		if err != nil {
			return s, capacity, fmt.Errorf("read root cgroup: %w", err)
		}
		return s, capacity, nil
	}
	s, err := h.cgroups.readV2Root()
	if err == nil {
		return s, capacity, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return s, capacity, fmt.Errorf("read root cgroup: %w", err)
	}
	cpu, err := readKeyValues(filepath.Join(h.cgroups.root, "cpu.stat"))
	if err != nil {
		return s, capacity, fmt.Errorf("read root cgroup: %w", err)
	}
	s = cgroupStats{cpuUsageNanos: cpu["usage_usec"] * 1000}
	s.memUsage = sub(capacity, mi["MemFree"])
	s.workingSet = sub(s.memUsage, mi["Inactive(file)"])
	s.rss = mi["AnonPages"]
	return s, capacity, nil
}

// rlimit returns the pid limit (the lower of pid_max and threads-max) and
// the number of processes (tasks) on the host, as the kubelet reads them.
func (h host) rlimit(now time.Time) *statsapi.RlimitStats {
	r := &statsapi.RlimitStats{Time: metav1.NewTime(now)}
	var limit int64
	for _, f := range []string{"sys/kernel/pid_max", "sys/kernel/threads-max"} {
		if n, err := readUint(filepath.Join(h.proc, f)); err == nil && (limit == 0 || int64(n) < limit) {
			limit = int64(n)
		}
	}
	if limit > 0 {
		r.MaxPID = &limit
	}
	// /proc/loadavg's fourth field is running/total tasks; sysinfo(2)
	// truncates the count above 65535.
	if b, err := os.ReadFile(filepath.Join(h.proc, "loadavg")); err == nil {
		if f := strings.Fields(string(b)); len(f) > 3 {
			if _, total, ok := strings.Cut(f[3], "/"); ok {
				if n, err := strconv.ParseInt(total, 10, 64); err == nil {
					r.NumOfRunningProcesses = &n
				}
			}
		}
	}
	return r
}

// network reads the host's interfaces from /proc/net/dev, leaving out
// loopback and the pods' veth ends, as cadvisor does for the root
// container.
func (h host) network(now time.Time) (*statsapi.NetworkStats, error) {
	return readNetDev(filepath.Join(h.proc, "net", "dev"), now)
}

// readNetDev parses a /proc/net/dev file.
func readNetDev(path string, now time.Time) (*statsapi.NetworkStats, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	n := &statsapi.NetworkStats{Time: metav1.NewTime(now)}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		if name == "lo" || strings.HasPrefix(name, "veth") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 11 {
			continue
		}
		v := make([]uint64, 11)
		for i := range v {
			v[i], _ = strconv.ParseUint(f[i], 10, 64)
		}
		// Receive: bytes packets errs ...; transmit starts at field 8.
		is := statsapi.InterfaceStats{Name: name, RxBytes: ptr(v[0]), RxErrors: ptr(v[2]), TxBytes: ptr(v[8]), TxErrors: ptr(v[10])}
		n.Interfaces = append(n.Interfaces, is)
		if name == defaultInterface {
			n.InterfaceStats = is
		}
	}
	return n, nil
}

// fsStats is statfs of the filesystem holding path: capacity, available and
// used bytes, and inodes.
func fsStats(path string, now time.Time) (*statsapi.FsStats, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", path, err)
	}
	bs := uint64(st.Bsize)
	return &statsapi.FsStats{
		Time:           metav1.NewTime(now),
		CapacityBytes:  ptr(st.Blocks * bs),
		AvailableBytes: ptr(st.Bavail * bs),
		UsedBytes:      ptr((st.Blocks - st.Bfree) * bs),
		Inodes:         ptr(st.Files),
		InodesFree:     ptr(st.Ffree),
		InodesUsed:     ptr(st.Files - st.Ffree),
	}, nil
}

// diskUsage is what du counts under dir: bytes of the blocks the files
// take, and the number of inodes. A missing dir counts zero.
func diskUsage(dir string) (bytes, inodes uint64, err error) {
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		bytes += uint64(st.Blocks) * 512
		inodes++
		return nil
	})
	return bytes, inodes, err
}

func ptr[T any](v T) *T { return &v }
