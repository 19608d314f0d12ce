package nodestatus

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// HostMachine is the default MachineInfo: it reads the machine the agent
// runs on, from /proc, /sys, /etc and statfs(2) of the root directory. It
// keeps no state, so it is safe for concurrent use.
type HostMachine struct {
	rootDir string
	// hostRoot prefixes the /proc, /sys and /etc paths; tests point it at a
	// fake tree.
	hostRoot string
	// hostIP finds the default route's interface address.
	hostIP func() (net.IP, error)
}

var _ MachineInfo = (*HostMachine)(nil)

// NewHostMachine returns a HostMachine for cfg.RootDir. It does no I/O.
// With cfg.NodeIP set, Info leaves Machine.HostIP empty: the node's address
// is known, and finding the default route's interface (a read of the
// routing tables and a netlink dump of the interfaces) on every status
// update and admission was most of an idle agent's CPU.
func NewHostMachine(cfg Config) *HostMachine {
	h := &HostMachine{rootDir: cfg.withDefaults().RootDir, hostRoot: "/"}
	if cfg.NodeIP == "" {
		h.hostIP = utilnet.ChooseHostInterface
	}
	return h
}

// Info reads the CPU count, MemTotal, the root directory's filesystem size
// and the machine's identity. Only the memory and filesystem reads can
// fail; an unreadable identity file leaves its field empty.
func (h *HostMachine) Info() (*Machine, error) {
	mem, err := h.meminfo()
	if err != nil {
		return nil, err
	}
	fs, err := statfs(existingAncestor(h.rootDir))
	if err != nil {
		return nil, err
	}
	m := &Machine{
		NumCPU:                goruntime.NumCPU(),
		MemoryBytes:           mem["MemTotal"],
		EphemeralStorageBytes: fs.capacity,
		HugePages:             h.hugePages(),
		MachineID:             h.readTrimmed("etc/machine-id"),
		SystemUUID:            h.readTrimmed("sys/class/dmi/id/product_uuid"),
		BootID:                h.readTrimmed("proc/sys/kernel/random/boot_id"),
		KernelVersion:         h.readTrimmed("proc/sys/kernel/osrelease"),
		OSImage:               h.osImage(),
	}
	if h.hostIP != nil {
		if ip, err := h.hostIP(); err == nil {
			m.HostIP = ip
		}
	}
	return m, nil
}

// Usage reads MemAvailable, the root directory's free space and inodes,
// the PID limit and the number of tasks.
func (h *HostMachine) Usage() (*Usage, error) {
	mem, err := h.meminfo()
	if err != nil {
		return nil, err
	}
	fs, err := statfs(existingAncestor(h.rootDir))
	if err != nil {
		return nil, err
	}
	u := &Usage{
		MemoryAvailableBytes: mem["MemAvailable"],
		DiskAvailableBytes:   fs.available,
		DiskCapacityBytes:    fs.capacity,
		InodesFree:           fs.inodesFree,
		Inodes:               fs.inodes,
	}
	if _, ok := mem["MemAvailable"]; !ok {
		u.MemoryAvailableBytes = mem["MemFree"] // kernels before 3.14
	}
	// The kubelet's PID limit is the lower of pid_max and threads-max.
	for _, f := range []string{"proc/sys/kernel/pid_max", "proc/sys/kernel/threads-max"} {
		if n, err := strconv.ParseInt(h.readTrimmed(f), 10, 64); err == nil && (u.PIDMax == 0 || n < u.PIDMax) {
			u.PIDMax = n
		}
	}
	u.Processes = h.tasks()
	return u, nil
}

func (h *HostMachine) path(rel string) string {
	return filepath.Join(h.hostRoot, rel)
}

func (h *HostMachine) readTrimmed(rel string) string {
	b, err := os.ReadFile(h.path(rel))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// meminfo returns /proc/meminfo's fields in bytes.
func (h *HostMachine) meminfo() (map[string]int64, error) {
	b, err := os.ReadFile(h.path("proc/meminfo"))
	if err != nil {
		return nil, fmt.Errorf("read meminfo: %w", err)
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 1 && fields[1] == "kB" {
			n *= 1024
		}
		out[key] = n
	}
	if _, ok := out["MemTotal"]; !ok {
		return nil, fmt.Errorf("read meminfo: no MemTotal in %s", h.path("proc/meminfo"))
	}
	return out, nil
}

// tasks returns the number of processes and threads, the denominator of
// /proc/loadavg's fourth field ("running/total"); 0 when unreadable.
func (h *HostMachine) tasks() int64 {
	fields := strings.Fields(h.readTrimmed("proc/loadavg"))
	if len(fields) < 4 {
		return 0
	}
	_, total, ok := strings.Cut(fields[3], "/")
	if !ok {
		return 0
	}
	n, _ := strconv.ParseInt(total, 10, 64)
	return n
}

// osImage returns os-release's PRETTY_NAME, or "Linux" as cAdvisor does.
func (h *HostMachine) osImage() string {
	for _, rel := range []string{"etc/os-release", "usr/lib/os-release"} {
		b, err := os.ReadFile(h.path(rel))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "PRETTY_NAME="); ok {
				if u, err := strconv.Unquote(v); err == nil {
					v = u
				}
				return strings.Trim(v, `'`)
			}
		}
	}
	return "Linux"
}

// existingAncestor returns p or its nearest existing parent, so that a root
// directory not created yet reports the filesystem it will live on.
func existingAncestor(p string) string {
	for {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		p = parent
	}
}

// fsStats is what statfs tells about a filesystem, in bytes and inodes.
type fsStats struct {
	capacity, available, inodes, inodesFree int64
}

// hugePages reads the reserved huge pages of each page size from
// /sys/kernel/mm/hugepages/hugepages-<size>kB/nr_hugepages, as cadvisor
// does for the kubelet. A size whose count is unreadable is left out.
func (h *HostMachine) hugePages() corev1.ResourceList {
	entries, err := os.ReadDir(h.path("sys/kernel/mm/hugepages"))
	if err != nil {
		return nil
	}
	out := corev1.ResourceList{}
	for _, e := range entries {
		kb, ok := strings.CutPrefix(e.Name(), "hugepages-")
		if !ok {
			continue
		}
		size, err := strconv.ParseInt(strings.TrimSuffix(kb, "kB"), 10, 64)
		if err != nil || !strings.HasSuffix(kb, "kB") {
			continue
		}
		n, err := strconv.ParseInt(h.readTrimmed(filepath.Join("sys/kernel/mm/hugepages", e.Name(), "nr_hugepages")), 10, 64)
		if err != nil {
			continue
		}
		pageSize := resource.NewQuantity(size*1024, resource.BinarySI)
		out[corev1.ResourceName(corev1.ResourceHugePagesPrefix+pageSize.String())] = *resource.NewQuantity(n*size*1024, resource.BinarySI)
	}
	return out
}
