package volumes

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// Defaults of Config, the kubelet's.
const (
	// DefaultRootDir is where pod directories are, as in runtime/cri.
	DefaultRootDir = "/var/lib/nodekit"
	// DefaultResyncPeriod is the kubelet's sync frequency: how often every
	// API-backed volume is refreshed even without a pod sync.
	DefaultResyncPeriod = time.Minute
	// DefaultInitialBackOff and DefaultMaxBackOff bound the retries of a
	// failed volume set-up, as the kubelet's operation executor does.
	DefaultInitialBackOff = 500 * time.Millisecond
	DefaultMaxBackOff     = 2*time.Minute + 2*time.Second
	// DefaultResyncTimeout bounds the refresh of one pod's volumes in a
	// periodic resync.
	DefaultResyncTimeout = 30 * time.Second
)

// Config holds the volume manager's settings. The zero value is valid.
type Config struct {
	// RootDir holds the pod directories; a pod's volumes are under
	// <RootDir>/pods/<uid>/volumes/<plugin>/<name>, as the kubelet lays
	// them out. It must be the runtime's RootDir. Defaults to
	// /var/lib/nodekit.
	RootDir string `json:"rootDir,omitempty"`
	// ResyncPeriod is how often Run refreshes the API-backed volumes of
	// every pod (SetUpPod refreshes them on every pod sync too). Defaults
	// to 1m.
	ResyncPeriod time.Duration `json:"resyncPeriod,omitempty"`
	// ResyncTimeout bounds the API calls (object reads, token requests)
	// of one pod's refresh in a periodic resync, which holds the pod's
	// set-up lock, so that a slow API server delays neither the pod's
	// next sync nor its tear-down for longer. Defaults to 30s.
	ResyncTimeout time.Duration `json:"resyncTimeout,omitempty"`
	// InitialBackOff is the wait before the first retry of a volume that
	// failed to set up; it doubles on each failure. Defaults to 500ms.
	InitialBackOff time.Duration `json:"initialBackOff,omitempty"`
	// MaxBackOff caps the wait between retries. Defaults to 2m2s.
	MaxBackOff time.Duration `json:"maxBackOff,omitempty"`
	// DiskOnly keeps the volumes the kubelet puts on a tmpfs (secret,
	// downwardAPI and projected volumes, emptyDir medium Memory) in plain
	// directories and mounts nothing: for the simulated runtime, where no
	// container reads them and the agent may not be allowed to mount.
	// nodekit sets it with runtime "sim". Defaults to false.
	DiskOnly bool `json:"diskOnly,omitempty"`
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.RootDir != "" && !filepath.IsAbs(c.RootDir):
		return fmt.Errorf("volumes: rootDir %q must be an absolute path", c.RootDir)
	case c.ResyncPeriod < 0:
		return fmt.Errorf("volumes: resyncPeriod %s must not be negative", c.ResyncPeriod)
	case c.ResyncTimeout < 0:
		return fmt.Errorf("volumes: resyncTimeout %s must not be negative", c.ResyncTimeout)
	case c.InitialBackOff < 0 || c.MaxBackOff < 0:
		return errors.New("volumes: backoff durations must not be negative")
	case c.InitialBackOff > 0 && c.MaxBackOff > 0 && c.MaxBackOff < c.InitialBackOff:
		return fmt.Errorf("volumes: maxBackOff %s is below initialBackOff %s", c.MaxBackOff, c.InitialBackOff)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.RootDir == "" {
		c.RootDir = DefaultRootDir
	}
	if c.ResyncPeriod == 0 {
		c.ResyncPeriod = DefaultResyncPeriod
	}
	if c.ResyncTimeout == 0 {
		c.ResyncTimeout = DefaultResyncTimeout
	}
	if c.InitialBackOff == 0 {
		c.InitialBackOff = DefaultInitialBackOff
	}
	if c.MaxBackOff == 0 {
		c.MaxBackOff = DefaultMaxBackOff
	}
	return c
}
