package main

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/runtime/sim"
)

// driverRuntime is the simulated runtime answering RuntimeConfig with a
// given cgroup driver, or with no Linux section at all.
type driverRuntime struct {
	*sim.Runtime
	linux *runtimeapi.LinuxRuntimeConfiguration
}

func (r driverRuntime) RuntimeConfig(context.Context) (*runtimeapi.RuntimeConfigResponse, error) {
	return &runtimeapi.RuntimeConfigResponse{Linux: r.linux}, nil
}

// serveRuntime serves rt on a unix socket until the test ends and returns
// its endpoint.
func serveRuntime(t *testing.T, rt driverRuntime) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sim.Serve(ctx, l, rt, rt.Runtime) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return "unix://" + sock
}

func TestTheCgroupDriverIsTheRuntimes(t *testing.T) {
	newSim := func() *sim.Runtime {
		return sim.New(testingclock.NewFakeClock(time.Unix(1700000000, 0)), logr.Discard(), sim.Config{})
	}
	systemd := &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_SYSTEMD}
	cgroupfs := &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_CGROUPFS}
	tests := []struct {
		name       string
		linux      *runtimeapi.LinuxRuntimeConfiguration
		configured string
		want       string
	}{
		{"a cgroupfs runtime overrides a configured systemd (kubeadm's file on a cgroupfs node)", cgroupfs, "systemd", "cgroupfs"},
		{"a systemd runtime overrides the cgroupfs default", systemd, "cgroupfs", "systemd"},
		{"an answer without a Linux section keeps the configured driver", nil, "systemd", "systemd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := nodekit.Config{Runtime: nodekit.RuntimeCRI, RuntimeEndpoint: serveRuntime(t, driverRuntime{newSim(), tt.linux})}
			cfg.CRI.CgroupDriver = tt.configured
			if got := runtimeCgroupDriver(t.Context(), cfg, logr.Discard()); got != tt.want {
				t.Errorf("cgroup driver %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("the simulated runtime is not asked", func(t *testing.T) {
		cfg := nodekit.Config{Runtime: nodekit.RuntimeSim, RuntimeEndpoint: "unix:///nonexistent.sock"}
		cfg.CRI.CgroupDriver = "systemd"
		if got := runtimeCgroupDriver(t.Context(), cfg, logr.Discard()); got != "systemd" {
			t.Errorf("cgroup driver %q, want the configured systemd", got)
		}
	})
	t.Run("an unreachable runtime keeps the configured driver", func(t *testing.T) {
		cfg := nodekit.Config{Runtime: nodekit.RuntimeCRI, RuntimeEndpoint: "unix://" + filepath.Join(t.TempDir(), "none.sock")}
		cfg.CRI.CgroupDriver = "systemd"
		if got := runtimeCgroupDriver(t.Context(), cfg, logr.Discard()); got != "systemd" {
			t.Errorf("cgroup driver %q, want the configured systemd", got)
		}
	})
}

// cgroupsPerQOS and podPidsLimit reach the CRI manager's config, as the
// kubelet's container manager takes them (cmd/kubelet/app/server.go).
func TestKubeletConfigCgroupsPerQOSAndPodPidsLimit(t *testing.T) {
	for _, c := range []struct {
		name, file string
		perQOS     *bool
		pids       int64
		parent     string
	}{
		{"the defaults: QoS cgroups under /", kcHeader, nil, 0, "/"},
		{"cgroupsPerQOS false under a root", kcHeader + "cgroupsPerQOS: false\ncgroupRoot: /edge\n", boolPtrCgroup(false), 0, "/edge"},
		{"cgroupsPerQOS false alone: the runtime's parent", kcHeader + "cgroupsPerQOS: false\n", boolPtrCgroup(false), 0, ""},
		{"a pod pids limit", kcHeader + "podPidsLimit: 100\n", nil, 100, "/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, _, err := parseKubelet(t, c.file)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := o.config().Complete()
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.CRI.CgroupsPerQOS; (got == nil) != (c.perQOS == nil) || (got != nil && *got != *c.perQOS) {
				t.Errorf("CgroupsPerQOS = %v, want %v", got, c.perQOS)
			}
			if cfg.CRI.PodPidsLimit != c.pids || cfg.CRI.CgroupParent != c.parent {
				t.Errorf("PodPidsLimit %d, CgroupParent %q; want %d, %q", cfg.CRI.PodPidsLimit, cfg.CRI.CgroupParent, c.pids, c.parent)
			}
		})
	}
}

func boolPtrCgroup(v bool) *bool { return &v }
