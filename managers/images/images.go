package images

import (
	"context"
	"errors"
	"fmt"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Manager removes unused images to keep the image filesystem below its
// thresholds. Implementations must be safe for concurrent use.
type Manager interface {
	// Run collects once at start and then once per period until ctx ends;
	// failed passes are logged (and recorded as events when repeated) and
	// retried at the next period. It returns nil on a clean stop.
	Run(ctx context.Context) error
	// GarbageCollect runs one pass: images unused for longer than MaxAge,
	// then, when usage is at or above the high threshold, unused images
	// until usage is down to the low threshold. It blocks on the runtime.
	// It returns an error when the pass could not free what it had to.
	GarbageCollect(ctx context.Context) error
	// DeleteUnusedImages removes every image that may be removed (unused,
	// unpinned, not the sandbox image, detected MinAge ago), whatever the
	// usage, and returns the bytes freed. The eviction manager calls it to
	// reclaim disk before evicting pods.
	DeleteUnusedImages(ctx context.Context) (uint64, error)
}

// ImageFs reports the image filesystem's size and free space.
type ImageFs interface {
	// ImageFsUsage blocks on the runtime and the host; it returns the
	// capacity and the bytes available to unprivileged users.
	ImageFsUsage(ctx context.Context) (capacity, available uint64, err error)
}

// Filter, when given to the GC, limits the images it may remove to those
// for which it returns true (on top of every other rule). The default
// agent has none; tests that share a runtime use one to keep their hands
// off other tests' images.
type Filter func(img *runtimeapi.Image) bool

// The kubelet's defaults.
const (
	DefaultHighThresholdPercent = 85
	DefaultLowThresholdPercent  = 80
	DefaultMinAge               = 2 * time.Minute
	DefaultPeriod               = 5 * time.Minute
)

// Event reasons, the kubelet's.
const (
	ReasonFreeDiskSpaceFailed = "FreeDiskSpaceFailed"
	ReasonImageGCFailed       = "ImageGCFailed"
	ReasonInvalidDiskCapacity = "InvalidDiskCapacity"
)

// ErrNotEnoughFreed is wrapped by GarbageCollect's error when the images
// that may be removed do not free enough space.
var ErrNotEnoughFreed = errors.New("not enough space freed")

// Config is the image GC policy. The zero value is the kubelet's defaults.
type Config struct {
	// HighThresholdPercent is the image filesystem usage (percent of its
	// capacity) at or above which images are collected
	// (--image-gc-high-threshold); 100 turns collection by usage off.
	// Defaults to 85.
	HighThresholdPercent int `json:"highThresholdPercent,omitempty"`
	// LowThresholdPercent is the usage collection brings the filesystem
	// down to (--image-gc-low-threshold); below HighThresholdPercent.
	// Defaults to 80.
	LowThresholdPercent int `json:"lowThresholdPercent,omitempty"`
	// MinAge is how long an image must have been detected before it may be
	// removed (--image-minimum-gc-age). Defaults to 2m.
	MinAge time.Duration `json:"minAge,omitempty"`
	// MaxAge, when positive, removes images unused for longer, whatever
	// the usage (--image-maximum-gc-age); it must exceed MinAge. Defaults
	// to 0 (off).
	MaxAge time.Duration `json:"maxAge,omitempty"`
	// Period is how often GarbageCollect runs. Defaults to 5m, the
	// kubelet's fixed ImageGCPeriod.
	Period time.Duration `json:"period,omitempty"`
	// SandboxImage is never removed (--pod-infra-container-image). Defaults
	// to the one the runtime reports in its verbose status
	// (config.sandboxImage, containerd 1.x); containerd 2 pins its sandbox
	// image instead, which protects it too.
	SandboxImage string `json:"sandboxImage,omitempty"`
	// NodeName names the node the events are recorded on. Defaults to "".
	NodeName string `json:"nodeName,omitempty"`
}

// Validate checks the policy as the kubelet validates its configuration.
func (c Config) Validate() error {
	d := c.withDefaults()
	var errs []error
	if d.HighThresholdPercent < 0 || d.HighThresholdPercent > 100 {
		errs = append(errs, fmt.Errorf("imageGC highThresholdPercent %d: must be between 0 and 100", c.HighThresholdPercent))
	}
	if d.LowThresholdPercent < 0 || d.LowThresholdPercent > 100 {
		errs = append(errs, fmt.Errorf("imageGC lowThresholdPercent %d: must be between 0 and 100", c.LowThresholdPercent))
	}
	if d.LowThresholdPercent >= d.HighThresholdPercent {
		errs = append(errs, fmt.Errorf("imageGC lowThresholdPercent %d: must be less than highThresholdPercent %d",
			d.LowThresholdPercent, d.HighThresholdPercent))
	}
	if c.MinAge < 0 {
		errs = append(errs, fmt.Errorf("imageGC minAge %v: must not be negative", c.MinAge))
	}
	if c.MaxAge < 0 {
		errs = append(errs, fmt.Errorf("imageGC maxAge %v: must not be negative", c.MaxAge))
	}
	if c.MaxAge > 0 && c.MaxAge <= d.MinAge {
		errs = append(errs, fmt.Errorf("imageGC maxAge %v: must be greater than minAge %v", c.MaxAge, d.MinAge))
	}
	if c.Period < 0 {
		errs = append(errs, fmt.Errorf("imageGC period %v: must not be negative", c.Period))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.HighThresholdPercent == 0 {
		c.HighThresholdPercent = DefaultHighThresholdPercent
	}
	if c.LowThresholdPercent == 0 {
		c.LowThresholdPercent = DefaultLowThresholdPercent
	}
	if c.MinAge == 0 {
		c.MinAge = DefaultMinAge
	}
	if c.Period == 0 {
		c.Period = DefaultPeriod
	}
	return c
}
