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

	"golang.org/x/sys/unix"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// ioDeviceStats is one line of a cgroup v2 io.stat: a device's cumulative
// bytes and operations read, written and discarded.
type ioDeviceStats struct {
	major, minor                             uint64
	rbytes, wbytes, rios, wios, dbytes, dios uint64
}

// readV2 reads a cgroup of the unified hierarchy: cpu.stat (usage_usec),
// memory.current and memory.stat (working set = memory.current -
// inactive_file, as cadvisor computes it), memory.max, pids.current, io.stat
// and the pressure files where the kernel has them.
func (c cgroupReader) readV2(path string) (cgroupStats, error) {
	dir := filepath.Join(c.root, path)
	s, stat, err := c.readV2Common(dir)
	if err != nil {
		return s, err
	}
	if s.memUsage, err = readUint(filepath.Join(dir, "memory.current")); err != nil {
		return s, err
	}
	s.workingSet = sub(s.memUsage, stat["inactive_file"])
	if limit, err := readUint(filepath.Join(dir, "memory.max")); err == nil && !unlimited(limit) {
		s.limit = limit
	}
	if n, err := readUint(filepath.Join(dir, "pids.current")); err == nil {
		s.pids = &n
	}
	return s, nil
}

// readV2Root reads the root of the unified hierarchy, which has no
// memory.current, memory.max or pids.current: the usage is anon + file
// from its memory.stat (what cgroup v1's root usage_in_bytes counts, as
// runc's cgroup library and so cadvisor take it), and the working set that
// minus inactive_file. A root that does have memory.current (a cgroup
// namespace's root, which is a real cgroup) is read as any cgroup. It
// fails when the root has no memory.stat (kernels before 5.x).
func (c cgroupReader) readV2Root() (cgroupStats, error) {
	if _, err := os.Stat(filepath.Join(c.root, "memory.current")); err == nil {
		return c.readV2("/")
	}
	s, stat, err := c.readV2Common(c.root)
	if err != nil {
		return s, err
	}
	s.memUsage = stat["anon"] + stat["file"]
	s.workingSet = sub(s.memUsage, stat["inactive_file"])
	return s, nil
}

// readV2Common reads what every v2 cgroup, the root included, has:
// cpu.stat, memory.stat, io.stat and the pressure files. It returns
// memory.stat's values too.
func (c cgroupReader) readV2Common(dir string) (cgroupStats, map[string]uint64, error) {
	var s cgroupStats
	cpu, err := readKeyValues(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return s, nil, err
	}
	s.cpuUsageNanos = cpu["usage_usec"] * 1000
	stat, err := readKeyValues(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return s, nil, err
	}
	s.rss = stat["anon"]
	s.pageFaults = stat["pgfault"]
	s.majorPageFaults = stat["pgmajfault"]
	if s.io, err = readIOStat(filepath.Join(dir, "io.stat")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s, nil, err
	}
	for _, f := range []struct {
		name string
		dst  **statsapi.PSIStats
	}{{"cpu.pressure", &s.cpuPSI}, {"memory.pressure", &s.memoryPSI}, {"io.pressure", &s.ioPSI}} {
		psi, err := readPressure(filepath.Join(dir, f.name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return s, nil, err
		}
		*f.dst = psi
	}
	return s, stat, nil
}

// readPressure parses a PSI file ("some avg10=0.12 avg60=0.05 avg300=0.01
// total=123456", and a "full" line; total is in microseconds and is
// returned in nanoseconds, the stats API's unit). A kernel without PSI
// has no such file, or one that cannot be read (EOPNOTSUPP with psi=0):
// both read as nil.
func readPressure(path string) (*statsapi.PSIStats, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.EOPNOTSUPP) {
			return nil, nil
		}
		return nil, err
	}
	psi := &statsapi.PSIStats{}
	found := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 5 {
			continue
		}
		var d *statsapi.PSIData
		switch f[0] {
		case "some":
			d = &psi.Some
		case "full":
			d = &psi.Full
		default:
			continue
		}
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			var perr error
			switch k {
			case "avg10":
				d.Avg10, perr = strconv.ParseFloat(v, 64)
			case "avg60":
				d.Avg60, perr = strconv.ParseFloat(v, 64)
			case "avg300":
				d.Avg300, perr = strconv.ParseFloat(v, 64)
			case "total":
				var us uint64
				us, perr = strconv.ParseUint(v, 10, 64)
				d.Total = us * 1000
			}
			if perr != nil {
				return nil, fmt.Errorf("parse %s: %w", path, perr)
			}
		}
		found = true
	}
	if !found {
		return nil, fmt.Errorf("parse %s: no some or full line", path)
	}
	return psi, nil
}

// readIOStat parses io.stat: one line per device, "MAJ:MIN key=value ...".
// Keys it does not know are skipped (newer kernels add some).
func readIOStat(path string) ([]ioDeviceStats, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []ioDeviceStats
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		maj, min, ok := strings.Cut(f[0], ":")
		if !ok {
			continue
		}
		var d ioDeviceStats
		var err1, err2 error
		d.major, err1 = strconv.ParseUint(maj, 10, 64)
		d.minor, err2 = strconv.ParseUint(min, 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("parse %s: device %q", path, f[0])
		}
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				continue
			}
			switch k {
			case "rbytes":
				d.rbytes = n
			case "wbytes":
				d.wbytes = n
			case "rios":
				d.rios = n
			case "wios":
				d.wios = n
			case "dbytes":
				d.dbytes = n
			case "dios":
				d.dios = n
			}
		}
		out = append(out, d)
	}
	return out, nil
}
