package cri

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	systemddbus "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"
	corev1 "k8s.io/api/core/v1"
)

// fakeSystemd records the D-Bus calls of the systemd cgroup driver and
// answers each job "done" at once.
type fakeSystemd struct {
	mu      sync.Mutex
	calls   []string
	props   map[string]map[string]any // by unit: the last properties given
	units   map[string]bool           // started and not stopped
	version string
	closed  bool
}

func newFakeSystemd() *fakeSystemd {
	return &fakeSystemd{props: map[string]map[string]any{}, units: map[string]bool{}, version: `"v245.4-1.fc32"`}
}

func (f *fakeSystemd) record(unit string, props []systemddbus.Property) {
	if f.props[unit] == nil {
		f.props[unit] = map[string]any{}
	}
	for _, p := range props {
		f.props[unit][p.Name] = p.Value.Value()
	}
}

func (f *fakeSystemd) StartTransientUnitContext(_ context.Context, name, mode string, props []systemddbus.Property, ch chan<- string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("start %s %s", name, mode))
	if f.units[name] {
		return 0, godbus.Error{Name: "org.freedesktop.systemd1.UnitExists", Body: []any{"Unit " + name + " already exists."}}
	}
	f.units[name] = true
	f.record(name, props)
	ch <- "done"
	return 1, nil
}

func (f *fakeSystemd) SetUnitPropertiesContext(_ context.Context, name string, runtime bool, props ...systemddbus.Property) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("set %s runtime=%t", name, runtime))
	f.record(name, props)
	return nil
}

func (f *fakeSystemd) StopUnitContext(_ context.Context, name, mode string, ch chan<- string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("stop %s %s", name, mode))
	if !f.units[name] {
		return 0, godbus.Error{Name: "org.freedesktop.systemd1.NoSuchUnit"}
	}
	delete(f.units, name)
	delete(f.props, name)
	ch <- "done"
	return 1, nil
}

func (f *fakeSystemd) GetManagerProperty(prop string) (string, error) {
	if prop != "Version" {
		return "", fmt.Errorf("unexpected property %s", prop)
	}
	return f.version, nil
}

func (f *fakeSystemd) Connected() bool { return !f.closed }
func (f *fakeSystemd) Close()          { f.closed = true }

// newFakeSystemdCgroups is the systemd driver over a fake connection and
// a fake cgroupfs of the given version; dials counts connections opened.
func newFakeSystemdCgroups(t *testing.T, v2 bool) (*systemdCgroups, *fakeSystemd, string, *int) {
	t.Helper()
	fake := newFakeSystemd()
	dials := new(int)
	var fs interface {
		ensureAt(string, *cgroupResources) error
		removeAt(string) error
	}
	root := t.TempDir()
	if v2 {
		if err := os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpu memory pids"), 0o644); err != nil {
			t.Fatal(err)
		}
		fs = cgroupV2{root: root}
	} else {
		for _, c := range []string{"cpu", "cpuacct", "memory", "pids"} {
			if err := os.Mkdir(filepath.Join(root, c), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		fs = cgroupV1{root: root}
	}
	m := &systemdCgroups{fs: fs, v2: v2, dial: func(context.Context) (systemdConn, error) {
		*dials++
		return fake, nil
	}}
	return m, fake, root, dials
}

// The slice names are the kubelet's CgroupName.ToSystemd
// (pkg/kubelet/cm/cgroup_manager_linux.go), split into unit and parent by
// libctCgroupConfig; the properties are those libcontainer's systemd
// manager gives (opencontainers/cgroups systemd/v1.go and v2.go Apply,
// genV1ResourcesProperties and genV2ResourcesProperties, common.go
// addCPUQuota) for the kubelet's Create (Apply(-1), then Set).
func TestSystemdSlicesPerQoSClass(t *testing.T) {
	t.Parallel()
	for _, v2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("v2=%t", v2), func(t *testing.T) {
			m, fake, _, dials := newFakeSystemdCgroups(t, v2)
			p := newTestPodCgroups(m, v2, 100)
			if *dials != 0 {
				t.Fatalf("the connection was opened before the first pod")
			}
			pod := podWith("12-34", corev1RR("cpu", "250m", "memory", "64Mi"))
			if err := p.ensure(pod, true); err != nil {
				t.Fatalf("ensure: %v", err)
			}
			if got := p.parentOf(pod); got != "/kubepods.slice/kubepods-pod12_34.slice" {
				t.Errorf("sandbox parent = %q", got)
			}
			wantCalls := []string{
				"start kubepods.slice replace", "set kubepods.slice runtime=true",
				"start kubepods-burstable.slice replace", "set kubepods-burstable.slice runtime=true",
				"start kubepods-besteffort.slice replace", "set kubepods-besteffort.slice runtime=true",
				"start kubepods-pod12_34.slice replace", "set kubepods-pod12_34.slice runtime=true",
			}
			if !reflect.DeepEqual(fake.calls, wantCalls) {
				t.Errorf("calls:\n%q\nwant\n%q", fake.calls, wantCalls)
			}
			io := "BlockIOAccounting"
			mem, cpu, cpuValue := "MemoryLimit", "CPUShares", uint64(256)
			if v2 {
				io, mem, cpu, cpuValue = "IOAccounting", "MemoryMax", "CPUWeight", 10 // getCPUWeight(256)
			}
			want := map[string]any{
				"Description": "libcontainer container kubepods-pod12_34.slice", "Wants": []string{"kubepods.slice"},
				"MemoryAccounting": true, "CPUAccounting": true, io: true, "TasksAccounting": true, "DefaultDependencies": false,
				mem: uint64(64 << 20), cpu: cpuValue, "CPUQuotaPeriodUSec": uint64(100000), "CPUQuotaPerSecUSec": uint64(250000),
				"TasksMax": uint64(100),
			}
			if got := fake.props["kubepods-pod12_34.slice"]; !reflect.DeepEqual(got, want) {
				t.Errorf("pod slice properties:\n%v\nwant\n%v", got, want)
			}
			be := fake.props["kubepods-besteffort.slice"]
			if be["Wants"].([]string)[0] != "kubepods.slice" || be[cpu] != map[bool]uint64{false: 2, true: 1}[v2] {
				t.Errorf("besteffort slice properties: %v", be)
			}
			if w := fake.props["kubepods.slice"]["Wants"]; !reflect.DeepEqual(w, []string{"-.slice"}) {
				t.Errorf("kubepods.slice Wants = %v, want -.slice", w)
			}
		})
	}
}

func TestSystemdResizeRoundsTheQuotaAndRemoveStopsTheSlice(t *testing.T) {
	t.Parallel()
	m, fake, root, dials := newFakeSystemdCgroups(t, false)
	name := ParseCgroupfsName("/kubepods/burstable/pod5-6")
	if err := m.Ensure(name, &cgroupResources{CPUShares: ptrTo(int64(102))}); err != nil {
		t.Fatal(err)
	}
	// The resize of a slice that exists: its properties only. 15m of cpu
	// is a 1500us quota, 1.5%: systemd keeps whole percents, so 2%, and
	// cgroupfs gets the same 2000us.
	if err := m.Ensure(name, &cgroupResources{CPUShares: ptrTo(int64(204)), CPUQuota: ptrTo(int64(1500)), CPUPeriod: ptrTo(int64(100000)), PidsLimit: ptrTo(int64(-1))}); err != nil {
		t.Fatal(err)
	}
	unit := "kubepods-burstable-pod5_6.slice"
	props := fake.props[unit]
	if props["CPUShares"] != uint64(204) || props["CPUQuotaPerSecUSec"] != uint64(20000) || props["TasksMax"] != uint64(math.MaxUint64) {
		t.Errorf("resized properties: %v", props)
	}
	dir := filepath.Join(root, "cpu", name.ToSystemd())
	checkFiles(t, filepath.Join(root, "cpu"), name.ToSystemd(), map[string]string{"cpu.shares": "204", "cpu.cfs_quota_us": "2000"})
	// rmdir removes a real cgroup with its files; a temp dir must be
	// emptied first.
	files, _ := filepath.Glob(filepath.Join(root, "*", name.ToSystemd(), "*.*"))
	for _, f := range files {
		_ = os.Remove(f)
	}
	if err := m.Remove(name); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("slice directory left after the stop: %v", err)
	}
	if err := m.Remove(name); err != nil {
		t.Errorf("Remove of a slice systemd does not know: %v", err)
	}
	want := []string{"start " + unit + " replace", "set " + unit + " runtime=true", "start " + unit + " replace",
		"set " + unit + " runtime=true", "stop " + unit + " replace", "stop " + unit + " replace"}
	if !reflect.DeepEqual(fake.calls, want) {
		t.Errorf("calls:\n%q\nwant\n%q", fake.calls, want)
	}
	if *dials != 1 {
		t.Errorf("dials = %d, want 1 connection for every call", *dials)
	}
	// A broken connection is opened again at the next call.
	fake.closed = true
	if err := m.Ensure(name, nil); err != nil {
		t.Fatal(err)
	}
	if *dials != 2 {
		t.Errorf("dials after a broken connection = %d, want 2", *dials)
	}
}

func TestSystemdOldVersionGetsNoQuotaPeriod(t *testing.T) {
	t.Parallel()
	m, fake, _, _ := newFakeSystemdCgroups(t, true)
	fake.version = `"239"`
	if err := m.Ensure(ParseCgroupfsName("/kubepods"), &cgroupResources{CPUQuota: ptrTo(int64(-1)), CPUPeriod: ptrTo(int64(100000))}); err != nil {
		t.Fatal(err)
	}
	props := fake.props["kubepods.slice"]
	if _, ok := props["CPUQuotaPeriodUSec"]; ok || props["CPUQuotaPerSecUSec"] != uint64(math.MaxUint64) {
		t.Errorf("systemd 239 properties: %v (want no period, an infinite quota)", props)
	}
}

func corev1RR(kv ...string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: quantities(kv...), Limits: quantities(kv...)}
}
