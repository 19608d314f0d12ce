package nodestatus

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"testing"
)

// fakeHost writes a /proc, /sys and /etc tree under a temp dir.
func fakeHost(t *testing.T, files map[string]string) *HostMachine {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &HostMachine{
		rootDir:  filepath.Join(t.TempDir(), "not", "created", "yet"),
		hostRoot: root,
		hostIP:   func() (net.IP, error) { return net.ParseIP("192.0.2.7"), nil },
	}
}

func fullHost() map[string]string {
	return map[string]string{
		"proc/meminfo":                   "MemTotal:       16318856 kB\nMemFree:         1000000 kB\nMemAvailable:    8000000 kB\nHugePages_Total:       0\n",
		"proc/loadavg":                   "0.52 0.58 0.59 3/1234 56789\n",
		"proc/sys/kernel/pid_max":        "4194304\n",
		"proc/sys/kernel/threads-max":    "127000\n",
		"proc/sys/kernel/osrelease":      "6.8.0-45-generic\n",
		"proc/sys/kernel/random/boot_id": "b0b0b0b0-1111-2222-3333-444455556666\n",
		"etc/machine-id":                 "0123456789abcdef0123456789abcdef\n",
		"etc/os-release":                 "NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nID=ubuntu\n",
		"sys/class/dmi/id/product_uuid":  "EC2A1B2C-0000-1111-2222-333344445555\n",
	}
}

func TestHostMachineInfo(t *testing.T) {
	t.Parallel()
	if goruntime.GOOS != "linux" {
		t.Skip("statfs is read on Linux only")
	}
	m, err := fakeHost(t, fullHost()).Info()
	if err != nil {
		t.Fatal(err)
	}
	want := Machine{
		NumCPU: goruntime.NumCPU(), MemoryBytes: 16318856 * 1024, EphemeralStorageBytes: m.EphemeralStorageBytes,
		MachineID: "0123456789abcdef0123456789abcdef", SystemUUID: "EC2A1B2C-0000-1111-2222-333344445555",
		BootID: "b0b0b0b0-1111-2222-3333-444455556666", KernelVersion: "6.8.0-45-generic",
		OSImage: "Ubuntu 24.04.1 LTS", HostIP: m.HostIP,
	}
	if m.EphemeralStorageBytes <= 0 || !m.HostIP.Equal(net.ParseIP("192.0.2.7")) || !reflect.DeepEqual(*m, want) {
		t.Errorf("Info() = %+v\nwant %+v with a positive storage size and host IP 192.0.2.7", *m, want)
	}
}

func TestHostMachineUsage(t *testing.T) {
	t.Parallel()
	if goruntime.GOOS != "linux" {
		t.Skip("statfs is read on Linux only")
	}
	u, err := fakeHost(t, fullHost()).Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.MemoryAvailableBytes != 8000000*1024 {
		t.Errorf("memory available %d, want %d", u.MemoryAvailableBytes, 8000000*1024)
	}
	if u.PIDMax != 127000 || u.Processes != 1234 {
		t.Errorf("pids %d of %d, want 1234 of 127000 (the lower of pid_max and threads-max)", u.Processes, u.PIDMax)
	}
	if u.DiskCapacityBytes <= 0 || u.DiskAvailableBytes > u.DiskCapacityBytes || u.Inodes < u.InodesFree {
		t.Errorf("disk %d of %d, inodes %d of %d: want a sane filesystem", u.DiskAvailableBytes, u.DiskCapacityBytes, u.InodesFree, u.Inodes)
	}
}

func TestHostMachineFallbacks(t *testing.T) {
	t.Parallel()
	if goruntime.GOOS != "linux" {
		t.Skip("statfs is read on Linux only")
	}
	h := fakeHost(t, map[string]string{"proc/meminfo": "MemTotal: 1024 kB\nMemFree: 512 kB\n"})
	m, err := h.Info()
	if err != nil {
		t.Fatal(err)
	}
	if m.OSImage != "Linux" || m.MachineID != "" || m.SystemUUID != "" {
		t.Errorf("Info() = %+v, want OS image Linux and empty identity", *m)
	}
	u, err := h.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.MemoryAvailableBytes != 512*1024 || u.PIDMax != 0 || u.Processes != 0 {
		t.Errorf("Usage() = %+v, want MemFree as available and unknown pids", *u)
	}
}

func TestHostMachineNeedsMeminfo(t *testing.T) {
	t.Parallel()
	h := fakeHost(t, map[string]string{"proc/meminfo": "Garbage\n"})
	if _, err := h.Info(); err == nil {
		t.Error("Info() without MemTotal returned nil error")
	}
	if _, err := fakeHost(t, nil).Usage(); err == nil {
		t.Error("Usage() without meminfo returned nil error")
	}
}

func TestHostMachineReadsThisMachine(t *testing.T) {
	t.Parallel()
	if goruntime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	h := NewHostMachine(Config{NodeName: "n", RootDir: t.TempDir()})
	m, err := h.Info()
	if err != nil {
		t.Fatal(err)
	}
	if m.NumCPU < 1 || m.MemoryBytes <= 0 || m.EphemeralStorageBytes <= 0 || m.KernelVersion == "" {
		t.Errorf("Info() = %+v, want CPUs, memory, storage and a kernel version", *m)
	}
	u, err := h.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.MemoryAvailableBytes <= 0 || u.PIDMax <= 0 || u.Processes <= 0 {
		t.Errorf("Usage() = %+v, want available memory and pids", *u)
	}
}

func TestHostMachineLooksForTheDefaultRouteOnlyWithoutANodeIP(t *testing.T) {
	t.Parallel()
	if NewHostMachine(Config{NodeName: "n", NodeIP: "10.0.0.5"}).hostIP != nil {
		t.Error("with a NodeIP, Info still reads the routing tables for Machine.HostIP")
	}
	if NewHostMachine(Config{NodeName: "n"}).hostIP == nil {
		t.Error("without a NodeIP, Info does not find Machine.HostIP")
	}
}
