package objects

import (
	"fmt"
	"time"
)

// Config holds the object caches' and token manager's settings.
type Config struct {
	// SyncWait is how long a Get for an object whose watch has not yet
	// delivered its first list waits for it before it reads the object
	// from the API server directly. Defaults to 1s (the kubelet waits 1s
	// for the object's reflector to sync).
	SyncWait time.Duration `json:"syncWait,omitempty"`
	// TokenGCPeriod is how often the token manager drops expired tokens
	// from its cache. Defaults to 1m, as the kubelet.
	TokenGCPeriod time.Duration `json:"tokenGCPeriod,omitempty"`
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.SyncWait < 0 {
		return fmt.Errorf("objects: syncWait %s must not be negative", c.SyncWait)
	}
	if c.TokenGCPeriod < 0 {
		return fmt.Errorf("objects: tokenGCPeriod %s must not be negative", c.TokenGCPeriod)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.SyncWait == 0 {
		c.SyncWait = time.Second
	}
	if c.TokenGCPeriod == 0 {
		c.TokenGCPeriod = time.Minute
	}
	return c
}
