package podworkers

import (
	"errors"
	"fmt"
	"time"
)

// Defaults of Config, the kubelet's values.
const (
	// DefaultResyncInterval is the kubelet's default SyncFrequency.
	DefaultResyncInterval = time.Minute
	// DefaultBackOffPeriod is the kubelet's backOffPeriod after a failed
	// sync.
	DefaultBackOffPeriod = 10 * time.Second
	// DefaultTransientRetry is the kubelet's backOffOnTransientErrorPeriod.
	DefaultTransientRetry = time.Second
	// DefaultTerminationStatusWait bounds a terminating or terminated
	// pod's wait for the PLEG cache: five relist periods of 1s.
	DefaultTerminationStatusWait = 5 * time.Second
	// DefaultTerminationGracePeriodSeconds is the grace period of a pod whose
	// spec sets none, as the API server defaults it.
	DefaultTerminationGracePeriodSeconds int64 = 30
)

// jitterFactor spreads requeues over [d, 1.5d), as the kubelet's
// workerResyncIntervalJitterFactor and workerBackOffPeriodJitterFactor do.
const jitterFactor = 0.5

// Config configures PodWorkers. The zero value is valid and means the
// defaults.
type Config struct {
	// ResyncInterval is how long after a successful sync a pod is queued in
	// the WorkQueue for its next periodic sync (the kubelet's
	// SyncFrequency), plus up to 50% jitter. Defaults to 1m.
	ResyncInterval time.Duration `json:"resyncInterval,omitempty"`
	// BackOffPeriod is how long after a failed sync the pod is queued for a
	// retry, plus up to 50% jitter. Defaults to 10s.
	BackOffPeriod time.Duration `json:"backOffPeriod,omitempty"`
	// TransientRetry replaces BackOffPeriod when the sync error wraps
	// ErrTransient (e.g. the pod network is not ready yet). Defaults to 1s.
	TransientRetry time.Duration `json:"transientRetry,omitempty"`
	// TerminationStatusWait is how long the sync of a terminating or
	// terminated pod waits for a status newer than its previous sync in
	// the StatusCache before it reads the status from the runtime (when
	// the SyncHandler is a PodStatusReader): a kill must go on while the
	// PLEG's relists fail. Defaults to 5s. The kubelet waits without bound.
	TerminationStatusWait time.Duration `json:"terminationStatusWait,omitempty"`
}

// Validate reports every negative field.
func (c Config) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"resyncInterval", c.ResyncInterval},
		{"backOffPeriod", c.BackOffPeriod},
		{"transientRetry", c.TransientRetry},
		{"terminationStatusWait", c.TerminationStatusWait},
	} {
		if f.d < 0 {
			errs = append(errs, fmt.Errorf("podworkers: %s %v must not be negative", f.name, f.d))
		}
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero (or negative) field set to its
// default.
func (c Config) withDefaults() Config {
	if c.ResyncInterval <= 0 {
		c.ResyncInterval = DefaultResyncInterval
	}
	if c.BackOffPeriod <= 0 {
		c.BackOffPeriod = DefaultBackOffPeriod
	}
	if c.TransientRetry <= 0 {
		c.TransientRetry = DefaultTransientRetry
	}
	if c.TerminationStatusWait <= 0 {
		c.TerminationStatusWait = DefaultTerminationStatusWait
	}
	return c
}
