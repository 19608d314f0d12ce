package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
)

// kernelDefault is a kernel setting the kubelet tunes at start, and the
// value it wants.
type kernelDefault struct {
	name string
	want int
}

// kernelDefaults are the kubelet's (pkg/kubelet/cm setupKernelTunables):
// memory overcommit always allowed, the OOM killer rather than a panic on
// OOM, a panic on an oops, a reboot 10s after a panic, and room for the
// keys of many containers.
var kernelDefaults = []kernelDefault{
	{"vm.overcommit_memory", 1},
	{"vm.panic_on_oom", 0},
	{"kernel.panic", 10},
	{"kernel.panic_on_oops", 1},
	{"kernel.keys.root_maxkeys", 1000000},
	{"kernel.keys.root_maxbytes", 25000000},
}

// checkKernelDefaults compares the kernel settings under procSys (/proc/sys)
// with kernelDefaults. With protect, as the kubelet's
// protectKernelDefaults, any that differs or cannot be read is an error
// naming each. Without it nodekit, unlike the kubelet, which writes them,
// changes nothing: it logs each difference. Tuning the host's kernel
// (a reboot 10s after any panic) is the node's provisioning's decision,
// not an agent's that may share the host with other software.
func checkKernelDefaults(procSys string, protect bool, log logr.Logger) error {
	var errs []error
	var differ []string
	for _, kd := range kernelDefaults {
		path := filepath.Join(procSys, strings.ReplaceAll(kd.name, ".", "/"))
		b, err := os.ReadFile(path)
		var got int
		if err == nil {
			got, err = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		switch {
		case err != nil && protect:
			errs = append(errs, fmt.Errorf("kernel flag %s: %w", kd.name, err))
		case err != nil:
			log.V(2).Info("Cannot read a kernel flag", "flag", kd.name, "err", err.Error())
		case got == kd.want:
		case protect:
			errs = append(errs, fmt.Errorf("invalid kernel flag: %s, expected value: %d, actual value: %d", kd.name, kd.want, got))
		default:
			differ = append(differ, fmt.Sprintf("%s=%d (kubelet: %d)", kd.name, got, kd.want))
		}
	}
	if len(differ) > 0 {
		log.Info("Kernel flags differ from the kubelet's values; nodekit leaves them (protectKernelDefaults refuses to start instead)",
			"flags", differ)
	}
	if len(errs) > 0 {
		return fmt.Errorf("protectKernelDefaults: %w", errors.Join(errs...))
	}
	return nil
}
