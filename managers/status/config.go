package status

import (
	"fmt"
	"time"
)

// Retry backoff for one pod's failed writes: it doubles from minRetry and
// stops growing at maxRetry.
const (
	minRetry = 100 * time.Millisecond
	maxRetry = 10 * time.Second
)

// Config holds the status manager's settings.
type Config struct {
	// SyncPeriod is how often every cached status is checked against the
	// API server: unwritten statuses are retried, statuses someone else
	// changed are written again, deleted pods whose resources are
	// reclaimed are removed. Changes are written at once regardless.
	// Defaults to 10s.
	SyncPeriod time.Duration `json:"syncPeriod,omitempty"`
	// NodeName is this node's name; the mirror client makes the Node the
	// owner of every mirror pod. The status manager itself does not use
	// it. Required by CreateMirrorPod. Defaults to "" (no mirror pods).
	NodeName string `json:"nodeName,omitempty"`
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.SyncPeriod < 0 {
		return fmt.Errorf("status manager: syncPeriod %s must not be negative", c.SyncPeriod)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.SyncPeriod == 0 {
		c.SyncPeriod = 10 * time.Second
	}
	return c
}
