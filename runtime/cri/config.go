package cri

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"time"
)

// Defaults of Config, as the kubelet has them.
const (
	// DefaultRootDir is where pod directories are created.
	DefaultRootDir = "/var/lib/nodekit"
	// DefaultPodLogsDir is where pod log directories are created (the
	// kubelet's podLogsDir default).
	DefaultPodLogsDir = "/var/log/pods"
	// DefaultContainerLogsDir holds the links to container logs that log
	// shippers read (the kubelet's fixed /var/log/containers).
	DefaultContainerLogsDir = "/var/log/containers"
	// DefaultInitialBackOff is the first CrashLoopBackOff delay.
	DefaultInitialBackOff = 10 * time.Second
	// DefaultMaxBackOff caps the CrashLoopBackOff delay.
	DefaultMaxBackOff = 300 * time.Second
	// DefaultBackOffResetAfter is how long a container must run before its
	// CrashLoopBackOff starts again from the initial delay.
	DefaultBackOffResetAfter = 600 * time.Second
	// DefaultMinimumKillGracePeriod is the shortest stop timeout given to a
	// container, so that it is never SIGKILLed without a chance to exit.
	DefaultMinimumKillGracePeriod = 2 * time.Second
	// DefaultResolvConf is the host resolver file read for pod DNS.
	DefaultResolvConf = "/etc/resolv.conf"
	// DefaultClusterDomain is the DNS domain of the cluster's services.
	DefaultClusterDomain = "cluster.local"
	// DefaultImagePullBackOff is the first delay after a failed image pull.
	DefaultImagePullBackOff = 10 * time.Second
	// DefaultImagePullMaxBackOff caps the delay between image pulls.
	DefaultImagePullMaxBackOff = 300 * time.Second
	// CgroupDriverCgroupfs manages cgroups as cgroupfs directories.
	CgroupDriverCgroupfs = "cgroupfs"
	// CgroupDriverSystemd names cgroups as systemd slices.
	CgroupDriverSystemd = "systemd"
	// defaultTerminationGracePeriod applies when neither the pod nor the
	// container's annotations name a grace period (the API's default).
	defaultTerminationGracePeriod = 30 * time.Second
)

// Config configures the CRI runtime manager. The zero value is valid except
// for InstanceID, which Validate requires.
type Config struct {
	// InstanceID tags every sandbox and container this manager creates (label
	// nodekit.io/instance); the manager lists, kills and garbage-collects
	// only objects with its own tag, so several agents can share one runtime.
	// Required: nodekit defaults it to the node name. Defaults to nothing.
	InstanceID string
	// RootDir holds pod directories (<RootDir>/pods/<uid>: the volume
	// manager's volumes and termination message files). Defaults to
	// /var/lib/nodekit.
	RootDir string
	// PodLogsDir holds the pods' log directories, in the kubelet's layout:
	// <PodLogsDir>/<namespace>_<name>_<uid>/<container>/<restartCount>.log
	// (the kubelet's podLogsDir). Defaults to /var/log/pods.
	PodLogsDir string
	// ContainerLogsDir holds a link per container to its log file,
	// <pod>_<namespace>_<container>-<containerID>.log, made once the
	// container started and removed with the container, as the kubelet
	// makes them in its fixed /var/log/containers for log shippers.
	// Defaults to /var/log/containers.
	ContainerLogsDir string
	// CgroupParent, when set, is the cgroup root (the kubelet's cgroupRoot,
	// a cgroupfs path such as / or /nodekit) under which the manager keeps
	// the kubelet's layout of pod cgroups: CgroupParent/kubepods/pod<uid>
	// for Guaranteed pods and CgroupParent/kubepods/{burstable,besteffort}/
	// pod<uid> for the others, with the kubelet's limits (cpu shares or
	// weight, CFS quota, memory, PodPidsLimit, huge pages; the QoS cgroups'
	// shares), each created before the pod's sandbox and removed by
	// GarbageCollect after the pod is gone (agents may share a root: each
	// removes only the cgroups of the pods whose directory it made, never
	// the QoS cgroups nor anything else under the root). cgroup v1 and v2,
	// with either driver. Defaults to "" (no pod cgroups: the runtime's
	// default parent); nodekit.Config defaults it to "/", as the kubelet.
	CgroupParent string
	// CgroupsPerQOS keeps the QoS and pod cgroups under CgroupParent (the
	// kubelet's cgroupsPerQOS). False puts every sandbox directly under
	// CgroupParent, with no pod-level limits, as the kubelet does. Defaults
	// to true.
	CgroupsPerQOS *bool
	// PodPidsLimit is the process limit of each pod cgroup (the kubelet's
	// podPidsLimit); 0 and -1 leave pods unlimited. Defaults to 0.
	PodPidsLimit int64
	// CgroupDriver is the cgroup driver: "cgroupfs" (cgroups are
	// directories this manager makes under /sys/fs/cgroup) or "systemd"
	// (cgroups are transient slice units, kubepods-burstable-pod<uid>.slice,
	// made over systemd's D-Bus API, opened at the first pod). Defaults to
	// "cgroupfs".
	CgroupDriver string
	// DisableCPUCFSQuota stops cpu limits from becoming CFS quotas (the
	// kubelet's --cpu-cfs-quota=false). Defaults to false.
	DisableCPUCFSQuota bool
	// NodeMemoryBytes is the node's memory capacity, from which a Burstable
	// container's oom_score_adj is computed. Defaults to MemTotal from
	// /proc/meminfo, read once when first needed.
	NodeMemoryBytes int64
	// SeccompProfileRoot is the directory that Localhost seccomp profiles
	// are relative to. Defaults to <RootDir>/seccomp.
	SeccompProfileRoot string
	// SeccompDefault makes RuntimeDefault the seccomp profile of containers
	// that name none (the kubelet's seccompDefault). Defaults to false
	// (Unconfined).
	SeccompDefault bool
	// ClusterDNS are the cluster DNS servers given to pods with dnsPolicy
	// ClusterFirst (and ClusterFirstWithHostNet). Without them such pods get
	// the host's resolver settings, as the kubelet does, and a warning is
	// logged. Defaults to none.
	ClusterDNS []string
	// ClusterDomain is the cluster's DNS domain, for pod search paths and
	// hostnames with a subdomain. Defaults to cluster.local.
	ClusterDomain string
	// SerializeImagePulls pulls one image at a time (the kubelet's
	// serializeImagePulls). Defaults to true.
	SerializeImagePulls *bool
	// MaxParallelImagePulls caps concurrent pulls when SerializeImagePulls is
	// false. Defaults to 0 (no cap).
	MaxParallelImagePulls int
	// ImagePullBackOff is the first delay before an image that failed to
	// pull for a pod is pulled again; it doubles on each failure. Defaults
	// to 10s.
	ImagePullBackOff time.Duration
	// ImagePullMaxBackOff caps the image pull delay. Defaults to 300s.
	ImagePullMaxBackOff time.Duration
	// NodeHostsFile is the node's hosts file, which hostNetwork pods get
	// as their /etc/hosts (with their hostAliases). Defaults to /etc/hosts.
	NodeHostsFile string
	// RuntimeHandler is passed to RunPodSandbox to select a runtime class
	// handler. Defaults to "" (the runtime's default handler).
	RuntimeHandler string
	// InitialBackOff is the first CrashLoopBackOff delay; it doubles on each
	// restart. Defaults to 10s.
	InitialBackOff time.Duration
	// MaxBackOff caps the CrashLoopBackOff delay. Defaults to 300s.
	MaxBackOff time.Duration
	// BackOffResetAfter is how long a container must have run before its
	// CrashLoopBackOff starts again from InitialBackOff. Defaults to 600s.
	BackOffResetAfter time.Duration
	// MinimumKillGracePeriod is the shortest stop timeout a container gets,
	// whatever grace period the pod or the caller asks for. Defaults to 2s.
	MinimumKillGracePeriod time.Duration
	// NodeName is used for the spec.nodeName downward-API field of a pod whose
	// spec has no nodeName. Defaults to "".
	NodeName string
	// NodeIPs are the node's addresses, for the status.hostIP and
	// status.hostIPs downward-API fields when neither an EnvSource nor a
	// nodeip.Source (SetNodeIPs) is set; nodekit sets both, and configures
	// its nodeip.Source with these when given. Defaults to none (a
	// status.hostIP reference then fails with CreateContainerConfigError).
	NodeIPs []string
	// ResolvConf is the host resolver file that gives pods with dnsPolicy
	// Default (and ClusterFirst without ClusterDNS) their nameservers and
	// ClusterFirst pods their extra search domains; it is read at each
	// sandbox creation. Defaults to /etc/resolv.conf.
	ResolvConf string
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.InstanceID == "" {
		return errors.New("cri config: InstanceID must be set (nodekit uses the node name)")
	}
	if strings.HasSuffix(c.CgroupParent, ".slice") {
		return fmt.Errorf("cri config: CgroupParent %q is a systemd slice; give the cgroup name (such as /nodekit) and set CgroupDriver", c.CgroupParent)
	}
	if err := c.validateConfinement(); err != nil {
		return err
	}
	for name, dir := range map[string]string{"RootDir": c.RootDir, "PodLogsDir": c.PodLogsDir, "ContainerLogsDir": c.ContainerLogsDir} {
		if dir != "" && !filepath.IsAbs(dir) {
			return fmt.Errorf("cri config: %s %q must be an absolute path", name, dir)
		}
	}
	for name, d := range map[string]time.Duration{
		"InitialBackOff": c.InitialBackOff, "MaxBackOff": c.MaxBackOff,
		"BackOffResetAfter": c.BackOffResetAfter, "MinimumKillGracePeriod": c.MinimumKillGracePeriod,
		"ImagePullBackOff": c.ImagePullBackOff, "ImagePullMaxBackOff": c.ImagePullMaxBackOff,
	} {
		if d < 0 {
			return fmt.Errorf("cri config: %s must not be negative, got %s", name, d)
		}
	}
	if c.InitialBackOff > 0 && c.MaxBackOff > 0 && c.InitialBackOff > c.MaxBackOff {
		return fmt.Errorf("cri config: InitialBackOff %s exceeds MaxBackOff %s", c.InitialBackOff, c.MaxBackOff)
	}
	for _, ip := range c.NodeIPs {
		if _, err := netip.ParseAddr(ip); err != nil {
			return fmt.Errorf("cri config: NodeIPs: %w", err)
		}
	}
	return nil
}

// withDefaults returns c with every unset field at its default.
func (c Config) withDefaults() Config {
	if c.RootDir == "" {
		c.RootDir = DefaultRootDir
	}
	if c.PodLogsDir == "" {
		c.PodLogsDir = DefaultPodLogsDir
	}
	if c.ContainerLogsDir == "" {
		c.ContainerLogsDir = DefaultContainerLogsDir
	}
	if c.InitialBackOff == 0 {
		c.InitialBackOff = DefaultInitialBackOff
	}
	if c.MaxBackOff == 0 {
		c.MaxBackOff = DefaultMaxBackOff
	}
	if c.BackOffResetAfter == 0 {
		c.BackOffResetAfter = DefaultBackOffResetAfter
	}
	if c.MinimumKillGracePeriod == 0 {
		c.MinimumKillGracePeriod = DefaultMinimumKillGracePeriod
	}
	if c.ResolvConf == "" {
		c.ResolvConf = DefaultResolvConf
	}
	return c.confinementDefaults()
}

// validateConfinement checks the resource, DNS and image pull settings.
func (c Config) validateConfinement() error {
	switch c.CgroupDriver {
	case "", CgroupDriverCgroupfs, CgroupDriverSystemd:
	default:
		return fmt.Errorf("cri config: CgroupDriver %q must be %q or %q", c.CgroupDriver, CgroupDriverCgroupfs, CgroupDriverSystemd)
	}
	if c.PodPidsLimit < -1 {
		return fmt.Errorf("cri config: PodPidsLimit must be -1 (no limit) or more, got %d", c.PodPidsLimit)
	}
	if c.NodeMemoryBytes < 0 {
		return fmt.Errorf("cri config: NodeMemoryBytes must not be negative, got %d", c.NodeMemoryBytes)
	}
	if c.SeccompProfileRoot != "" && !filepath.IsAbs(c.SeccompProfileRoot) {
		return fmt.Errorf("cri config: SeccompProfileRoot %q must be an absolute path", c.SeccompProfileRoot)
	}
	for _, ip := range c.ClusterDNS {
		if _, err := netip.ParseAddr(ip); err != nil {
			return fmt.Errorf("cri config: ClusterDNS: %w", err)
		}
	}
	if c.MaxParallelImagePulls < 0 {
		return fmt.Errorf("cri config: MaxParallelImagePulls must not be negative, got %d", c.MaxParallelImagePulls)
	}
	if c.serializeImagePulls() && c.MaxParallelImagePulls > 1 {
		return fmt.Errorf("cri config: MaxParallelImagePulls %d needs SerializeImagePulls false", c.MaxParallelImagePulls)
	}
	if d := c.confinementDefaults(); d.ImagePullBackOff > d.ImagePullMaxBackOff {
		return fmt.Errorf("cri config: ImagePullBackOff %s exceeds ImagePullMaxBackOff %s", d.ImagePullBackOff, d.ImagePullMaxBackOff)
	}
	return nil
}

// cgroupsPerQOS is CgroupsPerQOS with its default.
func (c Config) cgroupsPerQOS() bool {
	return c.CgroupsPerQOS == nil || *c.CgroupsPerQOS
}

// serializeImagePulls is SerializeImagePulls with its default.
func (c Config) serializeImagePulls() bool {
	return c.SerializeImagePulls == nil || *c.SerializeImagePulls
}

// confinementDefaults fills the unset resource, DNS and image pull fields.
// RootDir must be set first.
func (c Config) confinementDefaults() Config {
	if c.CgroupDriver == "" {
		c.CgroupDriver = CgroupDriverCgroupfs
	}
	if c.SeccompProfileRoot == "" {
		c.SeccompProfileRoot = filepath.Join(c.RootDir, "seccomp")
	}
	if c.ClusterDomain == "" {
		c.ClusterDomain = DefaultClusterDomain
	}
	if c.ImagePullBackOff == 0 {
		c.ImagePullBackOff = DefaultImagePullBackOff
	}
	if c.ImagePullMaxBackOff == 0 {
		c.ImagePullMaxBackOff = DefaultImagePullMaxBackOff
	}
	return c
}
