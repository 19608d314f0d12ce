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
	// DefaultRootDir is where pod log and pod directories are created.
	DefaultRootDir = "/var/lib/nodekit"
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
	// RootDir holds pod log directories (<RootDir>/logs/<ns>_<name>_<uid>)
	// and pod directories (<RootDir>/pods/<uid>: emptyDir volumes and
	// termination message files). Defaults to /var/lib/nodekit.
	RootDir string
	// CgroupParent, when set, is a cgroupfs path (such as /nodekit) under
	// which each pod's sandbox gets CgroupParent/pod<uid>. Systemd slices are
	// not supported. Defaults to "" (the runtime's own default).
	CgroupParent string
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
	// status.hostIPs downward-API fields. Defaults to none (they expand to "").
	NodeIPs []string
	// ResolvConf is the host resolver file that gives pods with dnsPolicy
	// Default (and ClusterFirst, as nodekit has no cluster DNS) their
	// nameservers; it is read at each sandbox creation. Defaults to
	// /etc/resolv.conf.
	ResolvConf string
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.InstanceID == "" {
		return errors.New("cri config: InstanceID must be set (nodekit uses the node name)")
	}
	if strings.HasSuffix(c.CgroupParent, ".slice") {
		return fmt.Errorf("cri config: CgroupParent %q is a systemd slice; only cgroupfs paths are supported", c.CgroupParent)
	}
	if c.RootDir != "" && !filepath.IsAbs(c.RootDir) {
		return fmt.Errorf("cri config: RootDir %q must be an absolute path", c.RootDir)
	}
	for name, d := range map[string]time.Duration{
		"InitialBackOff": c.InitialBackOff, "MaxBackOff": c.MaxBackOff,
		"BackOffResetAfter": c.BackOffResetAfter, "MinimumKillGracePeriod": c.MinimumKillGracePeriod,
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
	return c
}
