package stats

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Provider reads the node's and its pods' resource usage. The HTTP server
// serves it as /stats/summary and /metrics/resource; the eviction manager
// reads the same values.
//
// Implementations must be safe for concurrent use. Each call reads fresh
// values (it may block on the runtime and on the host's files for as long as
// ctx allows); the caller owns the returned objects.
type Provider interface {
	SummaryProvider
	// ListPodStats returns the running pods' stats (what Summary puts in
	// Pods), without reading the node's.
	ListPodStats(ctx context.Context, onlyCPUAndMemory bool) ([]statsapi.PodStats, error)
	// NodeStats returns the node's stats (what Summary puts in Node).
	NodeStats(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.NodeStats, error)
}

// SummaryProvider is the part of Provider that /stats/summary and
// /metrics/resource read.
type SummaryProvider interface {
	// Summary returns the node's stats and every running pod's, in the
	// kubelet's stats/v1alpha1 form. With onlyCPUAndMemory it reads only
	// CPU and memory (what metrics-server and /metrics/resource need) and
	// leaves filesystems, network and limits out, as the kubelet's
	// only_cpu_and_memory=true does.
	Summary(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.Summary, error)
}

// Defaults of Config.
const (
	// DefaultCgroupfsRoot is where the cgroup hierarchies are mounted.
	DefaultCgroupfsRoot = "/sys/fs/cgroup"
	// DefaultProcRoot is where procfs is mounted.
	DefaultProcRoot = "/proc"
)

// Config configures the CRI stats provider. The zero value reads every pod
// the runtime has, with no pod cgroups known, on the root directory "/".
type Config struct {
	// NodeName names the node in Summary. Defaults to "".
	NodeName string `json:"nodeName,omitempty"`
	// InstanceID, when set, limits the pods to the sandboxes labelled with
	// it (runtime.LabelInstance), so that agents sharing a runtime each
	// report only their own. Defaults to "" (every sandbox).
	InstanceID string `json:"instanceID,omitempty"`
	// RootDir is the agent's root directory: its filesystem is the node's
	// (nodefs). Defaults to "/".
	RootDir string `json:"rootDir,omitempty"`
	// PodLogsDir holds the pods' log directories (the CRI manager's
	// PodLogsDir), whose usage is the containers' log stats. Defaults to
	// /var/log/pods.
	PodLogsDir string `json:"podLogsDir,omitempty"`
	// CgroupRoot is the cgroupfs parent of the pod cgroups (the CRI
	// manager's CgroupParent): pod P's cgroup is
	// CgroupRoot/kubepods[/burstable|/besteffort]/pod<uid>, and a container's
	// is its pod's cgroup/<containerID>. What the runtime leaves empty is
	// read from there. Defaults to "" (no pod cgroups: only the runtime's
	// values).
	CgroupRoot string `json:"cgroupRoot,omitempty"`
	// CgroupfsRoot is where the cgroup hierarchies are mounted. Defaults to
	// /sys/fs/cgroup.
	CgroupfsRoot string `json:"cgroupfsRoot,omitempty"`
	// ProcRoot is where procfs is mounted. Defaults to /proc.
	ProcRoot string `json:"procRoot,omitempty"`
	// VolumeStatsAggPeriod is how long a pod volume's measured usage is
	// reused before its directory is walked again (the kubelet's
	// volumeStatsAggPeriod). Defaults to 1m.
	VolumeStatsAggPeriod time.Duration `json:"volumeStatsAggPeriod,omitempty"`
}

// Validate checks that the paths, where set, are absolute.
func (c Config) Validate() error {
	for _, f := range []struct{ name, v string }{
		{"rootDir", c.RootDir}, {"podLogsDir", c.PodLogsDir}, {"cgroupfsRoot", c.CgroupfsRoot}, {"procRoot", c.ProcRoot},
	} {
		if f.v != "" && !filepath.IsAbs(f.v) {
			return fmt.Errorf("stats %s %q: must be an absolute path", f.name, f.v)
		}
	}
	if c.VolumeStatsAggPeriod < 0 {
		return fmt.Errorf("stats volumeStatsAggPeriod %v: must not be negative", c.VolumeStatsAggPeriod)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.RootDir == "" {
		c.RootDir = "/"
	}
	if c.PodLogsDir == "" {
		c.PodLogsDir = "/var/log/pods"
	}
	if c.CgroupfsRoot == "" {
		c.CgroupfsRoot = DefaultCgroupfsRoot
	}
	if c.ProcRoot == "" {
		c.ProcRoot = DefaultProcRoot
	}
	if c.VolumeStatsAggPeriod == 0 {
		c.VolumeStatsAggPeriod = DefaultVolumeStatsAggPeriod
	}
	return c
}
