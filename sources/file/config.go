package file

import (
	"errors"
	"fmt"
	"time"
)

// Config holds the static-pod manifest directory's settings.
type Config struct {
	// Path is the directory of pod manifests (the kubelet's staticPodPath).
	// Required: there is no default; leave Module out to run without
	// static pods.
	Path string `json:"path,omitempty"`
	// NodeName is this node's name: static pods are named
	// "<name>-<lowercase node name>" and bound to it. Required: there is
	// no default.
	NodeName string `json:"nodeName,omitempty"`
	// CheckPeriod is how often the whole directory is read again, on top of
	// watching it (the kubelet's fileCheckFrequency). Defaults to 20s.
	CheckPeriod time.Duration `json:"checkPeriod,omitempty"`
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.Path == "" {
		return errors.New("file source: path is required")
	}
	if c.NodeName == "" {
		return errors.New("file source: nodeName is required")
	}
	if c.CheckPeriod < 0 {
		return fmt.Errorf("file source: checkPeriod %s must not be negative", c.CheckPeriod)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.CheckPeriod == 0 {
		c.CheckPeriod = 20 * time.Second
	}
	return c
}
