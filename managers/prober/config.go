package prober

import (
	"errors"
	"fmt"
	"time"
)

// Defaults of Config, the kubelet's values.
const (
	// DefaultUpdateBuffer is the kubelet's results channel capacity.
	DefaultUpdateBuffer = 20
	// DefaultRetries is the kubelet's maxProbeRetries.
	DefaultRetries = 3
	// DefaultUserAgent is what the kubelet 1.37 sends in HTTP and gRPC probes.
	DefaultUserAgent = "kube-probe/1.37"
	// DefaultRestartGracePeriod is the kubelet's grace for containers
	// adopted after a restart (kubeletRestartGracePeriod).
	DefaultRestartGracePeriod = 10 * time.Second
)

// Probe field defaults, applied to a probe whose field is zero (the API
// server applies the same ones; static pods may arrive without them).
const (
	defaultPeriod           = 10 * time.Second
	defaultTimeout          = time.Second
	defaultSuccessThreshold = 1
	defaultFailureThreshold = 3
)

// Config configures the Prober. The zero value is valid and means the
// defaults.
type Config struct {
	// Seed seeds the random jitter of the first probe of workers started
	// within one probe period of the Prober's creation (after an agent
	// restart, so that probes do not all fire at once). Tests set it to get
	// a repeatable schedule. Defaults to 0, which seeds from the clock's
	// time at New.
	Seed int64
	// UpdateBuffer is the capacity of each results' Updates channel.
	// Defaults to 20.
	UpdateBuffer int
	// Retries is how many times one probe run is attempted when it errors
	// (a failure is not retried). Defaults to 3.
	Retries int
	// UserAgent is the User-Agent of HTTP and gRPC probes unless the probe
	// sets one. Defaults to "kube-probe/1.37".
	UserAgent string
	// RestartGracePeriod: a container that was running for this long before
	// the Prober was created was adopted after an agent restart; its
	// Started and Ready carry over from the status the agent passes (and the
	// pod's Ready condition) until its probes report. Defaults to 10s.
	RestartGracePeriod time.Duration
}

// Validate reports negative fields.
func (c Config) Validate() error {
	var errs []error
	if c.UpdateBuffer < 0 {
		errs = append(errs, fmt.Errorf("prober: updateBuffer %d must not be negative", c.UpdateBuffer))
	}
	if c.Retries < 0 {
		errs = append(errs, fmt.Errorf("prober: retries %d must not be negative", c.Retries))
	}
	if c.RestartGracePeriod < 0 {
		errs = append(errs, fmt.Errorf("prober: restartGracePeriod %v must not be negative", c.RestartGracePeriod))
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero (or negative) field set to its
// default. A zero Seed stays zero; New replaces it.
func (c Config) withDefaults() Config {
	if c.UpdateBuffer <= 0 {
		c.UpdateBuffer = DefaultUpdateBuffer
	}
	if c.Retries <= 0 {
		c.Retries = DefaultRetries
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.RestartGracePeriod <= 0 {
		c.RestartGracePeriod = DefaultRestartGracePeriod
	}
	return c
}
