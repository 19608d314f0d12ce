package main

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	criclient "k8s.io/cri-client/pkg"
	"k8s.io/klog/v2"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/runtime/cri"
)

// cgroupDriverTimeout bounds the RuntimeConfig call that asks the runtime
// for its cgroup driver.
const cgroupDriverTimeout = 10 * time.Second

// runtimeCgroupDriver is the cgroup driver the agent uses: the CRI
// runtime's, as the kubelet (KubeletCgroupDriverFromCRI, on by default)
// takes it from the runtime's RuntimeConfig answer whatever cgroupDriver
// says, so that a kubeadm file's "systemd" works on a node whose runtime
// uses cgroupfs, and the reverse. A runtime that does not answer, or does
// not implement RuntimeConfig, leaves the configured driver, as the
// kubelet falls back to its configuration.
func runtimeCgroupDriver(ctx context.Context, cfg nodekit.Config, log logr.Logger) string {
	configured := cfg.CRI.CgroupDriver
	if cfg.Runtime != nodekit.RuntimeCRI || cfg.RuntimeEndpoint == "" {
		return configured
	}
	ctx, cancel := context.WithTimeout(klog.NewContext(ctx, log.WithName("cri-client").V(4)), cgroupDriverTimeout)
	defer cancel()
	rs, err := criclient.NewRemoteRuntimeServiceBuilder().
		WithEndpoint(cfg.RuntimeEndpoint).
		WithConnectionTimeout(cgroupDriverTimeout).
		WithTracerProvider(nil).
		Build(ctx)
	if err != nil {
		log.Info("Could not ask the runtime for its cgroup driver; using the configured one", "cgroupDriver", configured, "err", err.Error())
		return configured
	}
	defer func() {
		if err := rs.Close(ctx); err != nil {
			log.V(4).Info("Failed to close the connection that asked the runtime for its cgroup driver", "err", err.Error())
		}
	}()
	resp, err := rs.RuntimeConfig(ctx)
	if err != nil {
		if status.Code(err) == codes.Unimplemented {
			log.Info("The runtime does not implement RuntimeConfig; using the configured cgroup driver", "cgroupDriver", configured)
		} else {
			log.Info("Could not ask the runtime for its cgroup driver; using the configured one", "cgroupDriver", configured, "err", err.Error())
		}
		return configured
	}
	if resp.GetLinux() == nil { // CgroupDriver's zero value is SYSTEMD: an empty answer says nothing
		return configured
	}
	driver := driverName(resp.GetLinux().GetCgroupDriver())
	if driver == "" {
		return configured
	}
	if configured != "" && driver != configured {
		log.Info("Using the runtime's cgroup driver in place of the configured one, as the kubelet does", "cgroupDriver", driver, "configured", configured)
	} else {
		log.V(2).Info("Using the runtime's cgroup driver", "cgroupDriver", driver)
	}
	return driver
}

// driverName is the CRI cgroup driver as cri.Config spells it.
func driverName(d runtimeapi.CgroupDriver) string {
	switch d {
	case runtimeapi.CgroupDriver_SYSTEMD:
		return cri.CgroupDriverSystemd
	case runtimeapi.CgroupDriver_CGROUPFS:
		return cri.CgroupDriverCgroupfs
	}
	return ""
}

// applyCgroupConfig sets the pod cgroup settings of a KubeletConfiguration
// file that have no flag: cgroupsPerQOS (false: sandboxes directly under
// cgroupRoot, or the runtime's default parent without one) and
// podPidsLimit (each pod cgroup's pids limit). It does nothing without
// such a file.
func (o *options) applyCgroupConfig(cfg *nodekit.Config) {
	if o.kubelet == nil {
		return
	}
	kc := &o.kubelet.kc
	if q := kc.CgroupsPerQOS; q != nil {
		perQOS := *q
		cfg.CRI.CgroupsPerQOS = &perQOS
	}
	if p := kc.PodPidsLimit; p != nil {
		cfg.CRI.PodPidsLimit = *p
	}
}
