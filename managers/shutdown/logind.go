package shutdown

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Default paths Logind looks at.
const (
	// DefaultSystemdDir exists when the host booted with systemd (what
	// sd_booted checks).
	DefaultSystemdDir = "/run/systemd/system"
	// DefaultSystemBusSocket is the system D-Bus socket logind listens on.
	DefaultSystemBusSocket = "/run/dbus/system_bus_socket"
)

var _ Trigger = (*Logind)(nil)

// Logind is the default Trigger, the kubelet's: a delay inhibitor lock on
// systemd-logind over the system D-Bus, released when PrepareForShutdown
// has been handled. nodekit has no D-Bus client (github.com/godbus/dbus/v5
// is not one of its dependencies), so Watch never takes the lock: it
// reports ErrUnavailable saying that the host has no systemd-logind, or,
// where logind is present, that the D-Bus trigger is not built. Supply
// another Trigger to shut down gracefully.
type Logind struct {
	// SystemdDir is checked for systemd. Defaults to DefaultSystemdDir.
	SystemdDir string
	// SystemBusSocket is checked for the system bus. Defaults to
	// DefaultSystemBusSocket, or the DBUS_SYSTEM_BUS_ADDRESS path when
	// set.
	SystemBusSocket string
}

// NewLogind returns the logind trigger with the default paths. It does no
// I/O.
func NewLogind() *Logind { return &Logind{} }

// Watch implements Trigger: it always fails, with an error that wraps
// ErrUnavailable and names the cause.
func (l *Logind) Watch(context.Context) (<-chan bool, error) {
	if err := l.detect(); err != nil {
		return nil, fmt.Errorf("%w: logind not available: graceful node shutdown needs systemd-logind: %w", ErrUnavailable, err)
	}
	return nil, fmt.Errorf("%w: systemd-logind is present but nodekit has no D-Bus client to take its inhibitor lock "+
		"(github.com/godbus/dbus/v5 is not a dependency); supply a shutdown.Trigger", ErrUnavailable)
}

// Release implements Trigger; Logind never holds a lock.
func (l *Logind) Release() error { return nil }

// detect reports why the host has no systemd-logind on the system bus.
func (l *Logind) detect() error {
	dir := l.SystemdDir
	if dir == "" {
		dir = DefaultSystemdDir
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("the host did not boot with systemd (no directory %s)", dir)
	}
	sock := l.SystemBusSocket
	if sock == "" {
		sock = DefaultSystemBusSocket
		if addr, ok := strings.CutPrefix(os.Getenv("DBUS_SYSTEM_BUS_ADDRESS"), "unix:path="); ok {
			sock, _, _ = strings.Cut(addr, ",")
		}
	}
	fi, err := os.Stat(sock)
	if err != nil {
		return fmt.Errorf("no system D-Bus socket at %s: %w", sock, err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return errors.New("no system D-Bus: " + sock + " is not a socket")
	}
	return nil
}
