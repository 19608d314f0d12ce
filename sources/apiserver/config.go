package apiserver

import (
	"errors"
	"fmt"
	"time"
)

// Config holds the API server source's settings.
type Config struct {
	// NodeName is this node's name: the source lists and watches the pods
	// whose spec.nodeName is NodeName, the only pods a node's credentials
	// may read under the Node authorizer. Required: there is no default.
	NodeName string `json:"nodeName,omitempty"`
	// Debounce is how long the source collects changes before it sends one
	// snapshot for all of them, so that a burst (a Deployment rolling, a
	// relist) gives one snapshot, not hundreds. Defaults to 50ms.
	Debounce time.Duration `json:"debounce,omitempty"`
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.NodeName == "" {
		return errors.New("api source: nodeName is required")
	}
	if c.Debounce < 0 {
		return fmt.Errorf("api source: debounce %s must not be negative", c.Debounce)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Debounce == 0 {
		c.Debounce = 50 * time.Millisecond
	}
	return c
}
