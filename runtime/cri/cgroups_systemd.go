package cri

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	systemddbus "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"
)

// systemdJobTimeout bounds each D-Bus call and the wait for its job.
const systemdJobTimeout = 30 * time.Second

// systemdConn is the part of a go-systemd D-Bus connection the systemd
// cgroup driver uses; *systemddbus.Conn implements it, and tests record the
// calls with a fake.
type systemdConn interface {
	StartTransientUnitContext(ctx context.Context, name, mode string, props []systemddbus.Property, ch chan<- string) (int, error)
	SetUnitPropertiesContext(ctx context.Context, name string, runtime bool, props ...systemddbus.Property) error
	StopUnitContext(ctx context.Context, name, mode string, ch chan<- string) (int, error)
	GetManagerProperty(prop string) (string, error)
	Connected() bool
	Close()
}

// dialSystemd opens the real connection: the system bus, or systemd's
// private socket for root when there is no bus daemon.
func dialSystemd(ctx context.Context) (systemdConn, error) {
	return systemddbus.NewWithContext(ctx)
}

// systemdCgroups is the systemd cgroup driver's manager: each cgroup is a
// transient slice unit (kubepods.slice, kubepods-burstable.slice,
// kubepods-burstable-pod<uid>.slice) started, resized and stopped over
// systemd's D-Bus API, with the properties libcontainer's systemd manager
// gives the kubelet's cgroups; after systemd, the same limits are written
// to the slice's cgroupfs files by fs (cgroupV1 or cgroupV2), as
// libcontainer does, which also covers the limits without a systemd
// property (hugetlb). The connection is opened at the first call, and
// opened again after it breaks.
type systemdCgroups struct {
	fs interface {
		ensureAt(rel string, res *cgroupResources) error
		removeAt(rel string) error
	}
	v2   bool
	dial func(ctx context.Context) (systemdConn, error)

	mu      sync.Mutex
	conn    systemdConn
	version int // systemd's version; -1 unknown, 0 not read yet
}

var _ cgroupManager = (*systemdCgroups)(nil)

// Name implements cgroupManager: the expanded slice path.
func (*systemdCgroups) Name(n CgroupName) string { return n.ToSystemd() }

// unitOf is the slice unit of n and its parent slice ("-.slice" for a
// cgroup under the root), as the kubelet's libctCgroupConfig splits them.
func unitOf(n CgroupName) (unit, parent string) {
	dir, base := path.Split(n.ToSystemd())
	if dir == "/" {
		return base, "-.slice"
	}
	return base, path.Base(dir)
}

// Ensure implements cgroupManager: it starts the slice (a slice that
// exists is kept), sets its resource properties, then writes the cgroupfs
// files, as the kubelet's Create (libcontainer Apply(-1), then Set) does;
// on an existing slice this is the kubelet's Update.
func (m *systemdCgroups) Ensure(n CgroupName, res *cgroupResources) error {
	if len(n) == 0 {
		return errors.New("systemd cgroup driver: the root slice cannot be managed")
	}
	unit, parent := unitOf(n)
	ctx, cancel := context.WithTimeout(context.Background(), systemdJobTimeout)
	defer cancel()
	conn, version, err := m.connection(ctx)
	if err != nil {
		return fmt.Errorf("slice %s: %w", unit, err)
	}
	ch := make(chan string, 1)
	_, err = conn.StartTransientUnitContext(ctx, unit, "replace", m.unitProperties(unit, parent), ch)
	switch {
	case isDBusError(err, "org.freedesktop.systemd1.UnitExists"):
		// A slice this agent made before: only its limits change.
	case err != nil:
		return m.failed(fmt.Errorf("start slice %s: %w", unit, err))
	default:
		if err := waitJob(ctx, ch); err != nil {
			return fmt.Errorf("start slice %s: %w", unit, err)
		}
	}
	res = roundQuotaForSystemd(res)
	if props := m.resourceProperties(res, version); len(props) > 0 {
		if err := conn.SetUnitPropertiesContext(ctx, unit, true, props...); err != nil {
			return m.failed(fmt.Errorf("set properties of slice %s: %w", unit, err))
		}
	}
	return m.fs.ensureAt(n.ToSystemd(), res)
}

// unitProperties are the properties a slice starts with, as libcontainer's
// systemd Apply gives them (systemd/v1.go and v2.go): a description, the
// parent slice through Wants= (a slice is not a scope: no Slice= and no
// Delegate=, which libcontainer sets on scopes only), every accounting on
// and no default dependencies.
func (m *systemdCgroups) unitProperties(unit, parent string) []systemddbus.Property {
	io := "BlockIOAccounting"
	if m.v2 {
		io = "IOAccounting"
	}
	return []systemddbus.Property{
		systemddbus.PropDescription("libcontainer container " + unit),
		systemddbus.PropWants(parent),
		newSystemdProp("MemoryAccounting", true),
		newSystemdProp("CPUAccounting", true),
		newSystemdProp(io, true),
		newSystemdProp("TasksAccounting", true),
		newSystemdProp("DefaultDependencies", false),
	}
}

// resourceProperties are res as libcontainer's genV1ResourcesProperties
// and genV2ResourcesProperties spell them: MemoryLimit (v1) or MemoryMax
// (v2), CPUShares (v1) or CPUWeight (v2, converted as for cgroupfs),
// CPUQuotaPeriodUSec (systemd 242 and later), CPUQuotaPerSecUSec (infinity
// for no quota) and TasksMax (infinity for -1). hugetlb and the unified
// files have no property here: they are written to cgroupfs.
func (m *systemdCgroups) resourceProperties(res *cgroupResources, version int) []systemddbus.Property {
	if res == nil {
		return nil
	}
	var props []systemddbus.Property
	if v := res.Memory; v != nil && *v != 0 {
		name := "MemoryLimit"
		if m.v2 {
			name = "MemoryMax"
		}
		props = append(props, newSystemdProp(name, systemdUint(*v)))
	}
	if v := res.CPUShares; v != nil && *v != 0 {
		if m.v2 {
			props = append(props, newSystemdProp("CPUWeight", uint64(cpuWeight(*v))))
		} else {
			props = append(props, newSystemdProp("CPUShares", uint64(*v)))
		}
	}
	var quota, period int64
	if res.CPUQuota != nil {
		quota = *res.CPUQuota
	}
	if res.CPUPeriod != nil {
		period = *res.CPUPeriod
	}
	if period != 0 && version >= 242 {
		props = append(props, newSystemdProp("CPUQuotaPeriodUSec", uint64(period)))
	}
	if quota != 0 || period != 0 {
		props = append(props, newSystemdProp("CPUQuotaPerSecUSec", quotaPerSecUSec(quota, period)))
	}
	if v := res.PidsLimit; v != nil && (*v > 0 || *v == -1) {
		props = append(props, newSystemdProp("TasksMax", systemdUint(*v)))
	}
	return props
}

// quotaPerSecUSec is a CFS quota as systemd's CPUQuotaPerSecUSec: the
// microseconds per second of cpu time, rounded up to 10ms since systemd
// keeps whole percents (libcontainer systemd/common.go addCPUQuota);
// infinity (max uint64) when the quota is unlimited.
func quotaPerSecUSec(quota, period int64) uint64 {
	if quota <= 0 {
		return math.MaxUint64
	}
	if period == 0 {
		period = quotaPeriod
	}
	perSec := uint64(quota) * 1000000 / uint64(period)
	if perSec%10000 != 0 {
		perSec = (perSec/10000 + 1) * 10000
	}
	return perSec
}

// roundQuotaForSystemd returns res with its quota rounded up as systemd
// keeps it, so that the cgroupfs file gets the same value (libcontainer
// addCPUQuota updates the quota it then writes); res is not changed.
func roundQuotaForSystemd(res *cgroupResources) *cgroupResources {
	if res == nil || res.CPUQuota == nil || *res.CPUQuota <= 0 {
		return res
	}
	period := int64(quotaPeriod)
	if res.CPUPeriod != nil && *res.CPUPeriod != 0 {
		period = *res.CPUPeriod
	}
	out := *res
	out.CPUQuota = ptrTo(int64(quotaPerSecUSec(*res.CPUQuota, period)) * period / 1000000)
	return &out
}

// systemdUint is a limit as a systemd uint64 property: infinity for -1.
func systemdUint(v int64) uint64 {
	if v < 0 {
		return math.MaxUint64
	}
	return uint64(v)
}

// newSystemdProp is one unit property.
func newSystemdProp(name string, value any) systemddbus.Property {
	return systemddbus.Property{Name: name, Value: godbus.MakeVariant(value)}
}

// Remove implements cgroupManager: it stops the slice (one systemd does
// not know is already gone), then removes what is left of its cgroupfs
// directories, as libcontainer's Destroy does.
func (m *systemdCgroups) Remove(n CgroupName) error {
	unit, _ := unitOf(n)
	ctx, cancel := context.WithTimeout(context.Background(), systemdJobTimeout)
	defer cancel()
	conn, _, err := m.connection(ctx)
	if err != nil {
		return fmt.Errorf("slice %s: %w", unit, err)
	}
	ch := make(chan string, 1)
	_, err = conn.StopUnitContext(ctx, unit, "replace", ch)
	switch {
	case isDBusError(err, "org.freedesktop.systemd1.NoSuchUnit"):
	case err != nil:
		return m.failed(fmt.Errorf("stop slice %s: %w", unit, err))
	default:
		if err := waitJob(ctx, ch); err != nil {
			return fmt.Errorf("stop slice %s: %w", unit, err)
		}
	}
	return m.fs.removeAt(n.ToSystemd())
}

// connection returns the connection, opening it when there is none, and
// systemd's version (-1 when it cannot be read).
func (m *systemdCgroups) connection(ctx context.Context) (systemdConn, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conn != nil && !m.conn.Connected() {
		m.conn.Close()
		m.conn = nil
	}
	if m.conn == nil {
		conn, err := m.dial(ctx)
		if err != nil {
			return nil, 0, fmt.Errorf("connect to systemd over D-Bus: %w", err)
		}
		m.conn = conn
		m.version = systemdVersion(conn)
	}
	return m.conn, m.version, nil
}

// failed drops a connection that broke during a call, so that the next
// call opens a new one; it returns err.
func (m *systemdCgroups) failed(err error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conn != nil && !m.conn.Connected() {
		m.conn.Close()
		m.conn = nil
	}
	return err
}

// systemdVersion reads systemd's version ("v245.4-1.fc32" and the like,
// quoted) as its leading number; -1 when it cannot.
func systemdVersion(conn systemdConn) int {
	s, err := conn.GetManagerProperty("Version")
	if err != nil {
		return -1
	}
	if u, err := strconv.Unquote(s); err == nil {
		s = u
	}
	s = strings.TrimLeft(s, "v")
	end := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if end >= 0 {
		s = s[:end]
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return v
}

// waitJob waits for a systemd job's result: "done" is success.
func waitJob(ctx context.Context, ch <-chan string) error {
	select {
	case r := <-ch:
		if r != "done" {
			return fmt.Errorf("systemd job ended %q", r)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the systemd job: %w", ctx.Err())
	}
}

// isDBusError reports whether err is the D-Bus error name.
func isDBusError(err error, name string) bool {
	var e godbus.Error
	if errors.As(err, &e) {
		return e.Name == name
	}
	var pe *godbus.Error
	return errors.As(err, &pe) && pe.Name == name
}
