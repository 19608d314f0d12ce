package nodestatus

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nodekit/nodekit/managers/eviction"
)

// DefaultAgentVersion is the kubeletVersion a node reports unless
// Config.AgentVersion says otherwise: the Kubernetes version of the k8s.io
// libraries nodekit is built with, with "+nodekit" as semver build metadata
// (as k3s reports "v1.31.4+k3s1"). `kubectl get nodes` shows it in the
// VERSION column, and version-skew checks that parse it as semver see
// v1.37.2.
const DefaultAgentVersion = "v1.37.2+nodekit"

// DefaultKubeletPort is the port a node advertises in
// status.daemonEndpoints.kubeletEndpoint: the kubelet's authenticated port,
// where the API server reaches logs, exec and port-forward.
const DefaultKubeletPort = 10250

// Config configures the Reporter. Only NodeName is required.
type Config struct {
	// NodeName is the Node object's name. Required.
	NodeName string `json:"nodeName,omitempty"`
	// NodeIP is the node's InternalIP. A loopback address is accepted (the
	// kubelet refuses one) so that a single-machine cluster works. A
	// nodeip.Source given with SetNodeIPs takes its place. Defaults to the
	// address of the default route's interface (Machine.HostIP).
	NodeIP string `json:"nodeIP,omitempty"`
	// Hostname is the node's Hostname address and its kubernetes.io/hostname
	// label. Defaults to NodeName.
	Hostname string `json:"hostname,omitempty"`
	// Labels are added to the default labels at registration and at every
	// restart; labels the node already has are never removed. Under the
	// NodeRestriction admission plugin only some kubernetes.io labels are
	// allowed. Defaults to none.
	Labels map[string]string `json:"labels,omitempty"`
	// Taints are the taints the Node is created with (the kubelet's
	// registerWithTaints). As the kubelet does, they are set only when the
	// node registers: an existing Node keeps the taints it has. Defaults
	// to none.
	Taints []corev1.Taint `json:"taints,omitempty"`
	// MaxPods is the node's pods capacity. Defaults to 110.
	MaxPods int `json:"maxPods,omitempty"`
	// RootDir is the agent's root directory; its filesystem is the node's
	// ephemeral-storage and the subject of DiskPressure. Defaults to
	// /var/lib/nodekit.
	RootDir string `json:"rootDir,omitempty"`
	// KubeletPort is advertised as status.daemonEndpoints.kubeletEndpoint.
	// Defaults to DefaultKubeletPort (10250).
	KubeletPort int `json:"kubeletPort,omitempty"`
	// AgentVersion is reported as nodeInfo.kubeletVersion. Defaults to
	// DefaultAgentVersion.
	AgentVersion string `json:"agentVersion,omitempty"`
	// StatusUpdateFrequency is how often the status is computed and, when it
	// changed, posted. Defaults to 10s.
	StatusUpdateFrequency time.Duration `json:"statusUpdateFrequency,omitempty"`
	// StatusReportFrequency is how often the status is posted even when it
	// did not change. Defaults to 5m.
	StatusReportFrequency time.Duration `json:"statusReportFrequency,omitempty"`
	// LeaseDuration is the node Lease's duration, whole seconds. Defaults to
	// 40s.
	LeaseDuration time.Duration `json:"leaseDuration,omitempty"`
	// RenewInterval is how often the Lease is renewed. Defaults to a quarter
	// of LeaseDuration (10s).
	RenewInterval time.Duration `json:"renewInterval,omitempty"`
	// Pressure holds the thresholds of the pressure conditions. Defaults to
	// the kubelet's hard eviction thresholds.
	Pressure Thresholds `json:"pressure,omitzero"`
	// Reserved is kube-reserved plus system-reserved, left out of the
	// allocatable resources (see Allocatable). Defaults to none.
	Reserved corev1.ResourceList `json:"reserved,omitempty"`
	// EvictionHard are the hard eviction thresholds; those of
	// memory.available and nodefs.available are left out of the
	// allocatable resources too. Defaults to none (the agent passes the
	// kubelet's defaults).
	EvictionHard eviction.Thresholds `json:"-"`
}

// Thresholds say when the node is under pressure. A negative value turns
// its condition's check off (the condition stays False).
type Thresholds struct {
	// MemoryAvailableBytes: MemoryPressure is True when less memory is
	// available. Defaults to 100Mi, the kubelet's memory.available.
	MemoryAvailableBytes int64 `json:"memoryAvailableBytes,omitempty"`
	// DiskAvailablePercent: DiskPressure is True when less of RootDir's
	// filesystem is available. Defaults to 10, the kubelet's
	// nodefs.available.
	DiskAvailablePercent int `json:"diskAvailablePercent,omitempty"`
	// InodesFreePercent: DiskPressure is True when fewer of that
	// filesystem's inodes are free. Defaults to 5, the kubelet's
	// nodefs.inodesFree.
	InodesFreePercent int `json:"inodesFreePercent,omitempty"`
	// PIDAvailablePercent: PIDPressure is True when fewer process IDs are
	// left (PIDMax minus Processes). The kubelet has no default for
	// pid.available. Defaults to 10.
	PIDAvailablePercent int `json:"pidAvailablePercent,omitempty"`
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.NodeName == "" {
		return errors.New("nodestatus: nodeName is required")
	}
	if errs := validation.IsDNS1123Subdomain(c.NodeName); len(errs) > 0 {
		return fmt.Errorf("nodestatus: nodeName %q: %s", c.NodeName, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(c.withDefaults().Hostname); len(errs) > 0 {
		return fmt.Errorf("nodestatus: hostname %q is not a label value: %s", c.withDefaults().Hostname, strings.Join(errs, "; "))
	}
	if c.NodeIP != "" {
		ip := net.ParseIP(c.NodeIP)
		if ip == nil {
			return fmt.Errorf("nodestatus: nodeIP %q is not an IP address", c.NodeIP)
		}
		if ip.IsUnspecified() || ip.IsMulticast() {
			return fmt.Errorf("nodestatus: nodeIP %q cannot be a node's address", c.NodeIP)
		}
	}
	for k, v := range c.Labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("nodestatus: label key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("nodestatus: label %q value %q: %s", k, v, strings.Join(errs, "; "))
		}
	}
	if err := validateTaints(c.Taints); err != nil {
		return err
	}
	if c.MaxPods < 0 {
		return fmt.Errorf("nodestatus: maxPods %d must not be negative", c.MaxPods)
	}
	if c.KubeletPort < 0 || c.KubeletPort > 65535 {
		return fmt.Errorf("nodestatus: kubeletPort %d must be between 0 and 65535", c.KubeletPort)
	}
	if err := c.Pressure.validate(); err != nil {
		return err
	}
	return c.validateDurations()
}

func (t Thresholds) validate() error {
	for _, f := range []struct {
		name string
		pct  int
	}{
		{"diskAvailablePercent", t.DiskAvailablePercent},
		{"inodesFreePercent", t.InodesFreePercent},
		{"pidAvailablePercent", t.PIDAvailablePercent},
	} {
		if f.pct > 100 {
			return fmt.Errorf("nodestatus: pressure.%s %d must be at most 100", f.name, f.pct)
		}
	}
	return nil
}

func (c Config) validateDurations() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"statusUpdateFrequency", c.StatusUpdateFrequency},
		{"statusReportFrequency", c.StatusReportFrequency},
		{"leaseDuration", c.LeaseDuration},
		{"renewInterval", c.RenewInterval},
	} {
		if f.d < 0 {
			return fmt.Errorf("nodestatus: %s %s must not be negative", f.name, f.d)
		}
	}
	d := c.withDefaults()
	if d.LeaseDuration < time.Second || d.LeaseDuration%time.Second != 0 {
		return fmt.Errorf("nodestatus: leaseDuration %s must be whole seconds", d.LeaseDuration)
	}
	if d.RenewInterval >= d.LeaseDuration {
		return fmt.Errorf("nodestatus: renewInterval %s must be shorter than leaseDuration %s", d.RenewInterval, d.LeaseDuration)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Hostname == "" {
		c.Hostname = c.NodeName
	}
	if c.MaxPods == 0 {
		c.MaxPods = 110
	}
	if c.RootDir == "" {
		c.RootDir = "/var/lib/nodekit"
	}
	if c.KubeletPort == 0 {
		c.KubeletPort = DefaultKubeletPort
	}
	if c.AgentVersion == "" {
		c.AgentVersion = DefaultAgentVersion
	}
	if c.StatusUpdateFrequency == 0 {
		c.StatusUpdateFrequency = 10 * time.Second
	}
	if c.StatusReportFrequency == 0 {
		c.StatusReportFrequency = 5 * time.Minute
	}
	if c.LeaseDuration == 0 {
		c.LeaseDuration = 40 * time.Second
	}
	if c.RenewInterval == 0 {
		c.RenewInterval = c.LeaseDuration / 4
	}
	c.Pressure = c.Pressure.withDefaults()
	return c
}

func (t Thresholds) withDefaults() Thresholds {
	if t.MemoryAvailableBytes == 0 {
		t.MemoryAvailableBytes = 100 << 20
	}
	if t.DiskAvailablePercent == 0 {
		t.DiskAvailablePercent = 10
	}
	if t.InodesFreePercent == 0 {
		t.InodesFreePercent = 5
	}
	if t.PIDAvailablePercent == 0 {
		t.PIDAvailablePercent = 10
	}
	return t
}

// validateTaints checks each taint's key, value and effect, and that no
// key and effect pair repeats, as the API server's Node validation does.
func validateTaints(taints []corev1.Taint) error {
	seen := map[string]bool{}
	for _, t := range taints {
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			return fmt.Errorf("nodestatus: taint key %q: %s", t.Key, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
			return fmt.Errorf("nodestatus: taint %q value %q: %s", t.Key, t.Value, strings.Join(errs, "; "))
		}
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return fmt.Errorf("nodestatus: taint %q effect %q: want %s, %s or %s", t.Key, t.Effect,
				corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute)
		}
		id := t.Key + ":" + string(t.Effect)
		if seen[id] {
			return fmt.Errorf("nodestatus: taint %q with effect %q is given twice", t.Key, t.Effect)
		}
		seen[id] = true
	}
	return nil
}
