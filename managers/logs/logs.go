package logs

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Manager keeps the running containers' log files within the rotation
// policy. Implementations must be safe for concurrent use.
type Manager interface {
	// Run checks every container's log once per monitor interval until ctx
	// ends, rotating those over the size limit. It returns nil on a clean
	// stop.
	Run(ctx context.Context) error
	// Clean removes a container's current and rotated logs; the container
	// must be gone or about to be removed. It is idempotent: a container
	// without logs is not an error.
	Clean(ctx context.Context, containerID string) error
}

// The kubelet's defaults (containerLogMaxSize, containerLogMaxFiles,
// containerLogMonitorInterval, containerLogMaxWorkers).
const (
	DefaultMaxSize         = "10Mi"
	DefaultMaxFiles        = 5
	DefaultMonitorInterval = 10 * time.Second
	DefaultMaxWorkers      = 1
)

// Config is the rotation policy. The zero value is the kubelet's defaults.
type Config struct {
	// MaxSize is the size at which a container's log file is rotated, as a
	// quantity (--container-log-max-size). Defaults to "10Mi".
	MaxSize string `json:"maxSize,omitempty"`
	// MaxFiles is the most log files a container keeps, the current one
	// included (--container-log-max-files); at least 2. Defaults to 5.
	MaxFiles int `json:"maxFiles,omitempty"`
	// MonitorInterval is how often the log sizes are checked; at least 3s.
	// Defaults to 10s.
	MonitorInterval time.Duration `json:"monitorInterval,omitempty"`
	// MaxWorkers is how many containers are rotated at once. Defaults to 1.
	MaxWorkers int `json:"maxWorkers,omitempty"`
	// InstanceID, when set, limits rotation to the containers labelled with
	// it (runtime.LabelInstance). Defaults to "" (every running container).
	InstanceID string `json:"instanceID,omitempty"`
}

// Validate checks the policy as the kubelet validates its configuration.
func (c Config) Validate() error {
	if c.MaxSize != "" {
		q, err := resource.ParseQuantity(c.MaxSize)
		if err != nil {
			return fmt.Errorf("logs maxSize %q: %w", c.MaxSize, err)
		}
		if q.Value() <= 0 {
			return fmt.Errorf("logs maxSize %q: must be positive", c.MaxSize)
		}
	}
	if c.MaxFiles != 0 && c.MaxFiles < 2 {
		return fmt.Errorf("logs maxFiles %d: must be at least 2", c.MaxFiles)
	}
	if c.MonitorInterval != 0 && c.MonitorInterval < 3*time.Second {
		return fmt.Errorf("logs monitorInterval %v: must be at least 3s", c.MonitorInterval)
	}
	if c.MaxWorkers < 0 {
		return fmt.Errorf("logs maxWorkers %d: must not be negative", c.MaxWorkers)
	}
	return nil
}

// withDefaults fills the unset fields; Validate must have passed.
func (c Config) withDefaults() Config {
	if c.MaxSize == "" {
		c.MaxSize = DefaultMaxSize
	}
	if c.MaxFiles == 0 {
		c.MaxFiles = DefaultMaxFiles
	}
	if c.MonitorInterval == 0 {
		c.MonitorInterval = DefaultMonitorInterval
	}
	if c.MaxWorkers == 0 {
		c.MaxWorkers = DefaultMaxWorkers
	}
	return c
}

// maxBytes is MaxSize in bytes (of a completed, valid Config).
func (c Config) maxBytes() int64 {
	q, err := resource.ParseQuantity(c.MaxSize)
	if err != nil {
		return 0
	}
	return q.Value()
}
