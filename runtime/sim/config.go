package sim

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Identity of the simulated runtime, as Version reports it.
const (
	// RuntimeName is the runtime name Version reports; the CRI manager uses
	// it as the container ID prefix ("sim://<id>"), so /pods shows that the
	// containers are simulated.
	RuntimeName = "sim"
	// RuntimeVersion is the simulated runtime's version.
	RuntimeVersion = "0.1.0-sim"
	// APIVersion is the CRI API version it speaks.
	APIVersion = "v1"
)

// Latency is the simulated duration of one CRI call: Fixed plus a uniformly
// random extra in [0, Jitter], drawn from the runtime's seeded source.
type Latency struct {
	// Fixed is the minimum duration of the call. Defaults to 0.
	Fixed time.Duration
	// Jitter is the largest random extra. Defaults to 0 (no jitter).
	Jitter time.Duration
}

// IsZero reports whether the call takes no time at all.
func (l Latency) IsZero() bool { return l.Fixed == 0 && l.Jitter == 0 }

// Config configures the simulated runtime. The zero value is valid: no
// latency, every image present, seed 0.
type Config struct {
	// Latency sets the latency of individual CRI calls, keyed by method name
	// as in the CRI interfaces ("RunPodSandbox", "PullImage", ...); calls not
	// named here take DefaultLatency. Defaults to none.
	Latency map[string]Latency
	// DefaultLatency is the latency of every call not named in Latency.
	// Defaults to zero: calls return without waiting on the clock.
	DefaultLatency Latency
	// Images are the images present in the simulated image store. When empty,
	// every image counts as present and every pull succeeds; otherwise pulls
	// of other images fail with "image not found", so that ErrImagePull paths
	// can be exercised. Defaults to none (every image present).
	Images []string
	// Seed seeds the random source of IDs and latency jitter, so that a run
	// is reproducible. Defaults to 0.
	Seed int64
}

// methods are the CRI calls whose latency can be configured.
var methods = []string{
	"Version", "Status", "RunPodSandbox", "StopPodSandbox", "RemovePodSandbox",
	"PodSandboxStatus", "ListPodSandbox", "CreateContainer", "StartContainer",
	"StopContainer", "RemoveContainer", "ListContainers", "ContainerStatus",
	"UpdateContainerResources", "ReopenContainerLog", "ExecSync",
	"UpdateRuntimeConfig", "RuntimeConfig", "ListImages", "ImageStatus",
	"PullImage", "RemoveImage", "ImageFsInfo",
	"ContainerStats", "ListContainerStats", "PodSandboxStats", "ListPodSandboxStats",
}

// Validate reports every unknown method name and negative duration.
func (c Config) Validate() error {
	var errs []error
	check := func(name string, l Latency) {
		if l.Fixed < 0 || l.Jitter < 0 {
			errs = append(errs, fmt.Errorf("sim: latency of %s must not be negative, got fixed %s jitter %s", name, l.Fixed, l.Jitter))
		}
	}
	check("the default", c.DefaultLatency)
	for name, l := range c.Latency {
		if !slices.Contains(methods, name) {
			errs = append(errs, fmt.Errorf("sim: latency for unknown CRI method %q (known: %v)", name, methods))
			continue
		}
		check(name, l)
	}
	for _, img := range c.Images {
		if img == "" {
			errs = append(errs, errors.New("sim: images must not contain an empty name"))
		}
	}
	return errors.Join(errs...)
}

// latency returns the configured latency of a method.
func (c Config) latency(method string) Latency {
	if l, ok := c.Latency[method]; ok {
		return l
	}
	return c.DefaultLatency
}
