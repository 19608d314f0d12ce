package agent

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// Config holds the sync loop's settings.
type Config struct {
	// NodeName is the node's name; pods report it through spec.nodeName.
	// Required.
	NodeName string `json:"nodeName,omitempty"`
	// NodeIP is the node's address (--node-ip), reported as the pods'
	// hostIP and as the podIP of hostNetwork pods when the Syncer has no
	// nodeip.Source (WithNodeIPs; nodekit gives one, which detects the
	// address when this is empty). Defaults to none.
	NodeIP string `json:"nodeIP,omitempty"`
	// MaxPods is how many pods the agent admits. Defaults to 110.
	MaxPods int `json:"maxPods,omitempty"`
	// SyncPeriod is how often the sync loop looks for pods due a resync.
	// Defaults to 1s.
	SyncPeriod time.Duration `json:"syncPeriod,omitempty"`
	// HousekeepingPeriod is how often pods that are gone are cleaned up.
	// Defaults to 2s.
	HousekeepingPeriod time.Duration `json:"housekeepingPeriod,omitempty"`
	// HousekeepingTimeout bounds the runtime listing housekeeping makes to
	// find orphaned pods. The listing runs off the sync loop, so a hung
	// runtime delays only housekeeping, never the loop. Defaults to 10s.
	HousekeepingTimeout time.Duration `json:"housekeepingTimeout,omitempty"`
	// RuntimeCheckPeriod is how often the runtime's status is checked, from
	// a goroutine of its own. Defaults to 5s.
	RuntimeCheckPeriod time.Duration `json:"runtimeCheckPeriod,omitempty"`
	// RuntimeCheckTimeout is how long the runtime may take to answer a
	// status check before the "runtime" health check fails; with
	// RuntimeCheckPeriod it bounds how long a hung runtime goes unnoticed
	// (5s + 2s by default). Defaults to 2s.
	RuntimeCheckTimeout time.Duration `json:"runtimeCheckTimeout,omitempty"`
	// ContainerGCPeriod is how often dead containers are removed, from a
	// goroutine of its own (the kubelet's ContainerGCPeriod). Defaults to
	// 1m.
	ContainerGCPeriod time.Duration `json:"containerGCPeriod,omitempty"`
	// SyncLoopHealthThreshold is how long the sync loop may go without an
	// iteration before /healthz reports it. Defaults to 5m.
	SyncLoopHealthThreshold time.Duration `json:"syncLoopHealthThreshold,omitempty"`
	// AllowedUnsafeSysctls are the sysctls, beyond the kubelet's safe set,
	// that pods may set (the kubelet's --allowed-unsafe-sysctls): names, or
	// patterns ending in "*" (net.core.*, kernel.msg*), each of a sysctl
	// the kernel namespaces. A pod setting any other is rejected with
	// reason SysctlForbidden. Defaults to none.
	AllowedUnsafeSysctls []string `json:"allowedUnsafeSysctls,omitempty"`
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.NodeName == "" {
		return errors.New("agent: nodeName is required")
	}
	if c.NodeIP != "" && net.ParseIP(c.NodeIP) == nil {
		return fmt.Errorf("agent: nodeIP %q is not an IP address", c.NodeIP)
	}
	if c.MaxPods < 0 {
		return fmt.Errorf("agent: maxPods %d must not be negative", c.MaxPods)
	}
	for name, d := range map[string]time.Duration{
		"syncPeriod": c.SyncPeriod, "housekeepingPeriod": c.HousekeepingPeriod,
		"housekeepingTimeout": c.HousekeepingTimeout, "runtimeCheckPeriod": c.RuntimeCheckPeriod,
		"runtimeCheckTimeout": c.RuntimeCheckTimeout, "containerGCPeriod": c.ContainerGCPeriod,
		"syncLoopHealthThreshold": c.SyncLoopHealthThreshold,
	} {
		if d < 0 {
			return fmt.Errorf("agent: %s %s must not be negative", name, d)
		}
	}
	if err := validateUnsafeSysctls(c.AllowedUnsafeSysctls); err != nil {
		return fmt.Errorf("agent: allowedUnsafeSysctls: %w", err)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.MaxPods == 0 {
		c.MaxPods = 110
	}
	if c.SyncPeriod == 0 {
		c.SyncPeriod = time.Second
	}
	if c.HousekeepingPeriod == 0 {
		c.HousekeepingPeriod = 2 * time.Second
	}
	if c.HousekeepingTimeout == 0 {
		c.HousekeepingTimeout = 10 * time.Second
	}
	if c.RuntimeCheckPeriod == 0 {
		c.RuntimeCheckPeriod = 5 * time.Second
	}
	if c.RuntimeCheckTimeout == 0 {
		c.RuntimeCheckTimeout = 2 * time.Second
	}
	if c.ContainerGCPeriod == 0 {
		c.ContainerGCPeriod = time.Minute
	}
	if c.SyncLoopHealthThreshold == 0 {
		c.SyncLoopHealthThreshold = 5 * time.Minute
	}
	return c
}
