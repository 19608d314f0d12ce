package apiserver

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// DefaultOfflineAfter is how long the source waits for the API server at
// start before it serves its checkpoint.
const DefaultOfflineAfter = 10 * time.Second

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
	// CheckpointDir, when set, is where the source keeps a local copy of
	// the node's pods (one <uid>.json file per pod, written atomically on
	// every change and removed when the pod leaves the API server). When
	// the API server does not answer the first list within OfflineAfter,
	// the source serves that copy, marked offline, until the server
	// answers. Defaults to none: no checkpoint, and the source sends
	// nothing until the API server answers, as the kubelet does.
	CheckpointDir string `json:"checkpointDir,omitempty"`
	// OfflineAfter is how long Run waits at start for the API server's
	// first list before it serves the checkpoint. Used only with
	// CheckpointDir. Defaults to 10s.
	OfflineAfter time.Duration `json:"offlineAfter,omitempty"`
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.NodeName == "" {
		return errors.New("api source: nodeName is required")
	}
	if c.Debounce < 0 {
		return fmt.Errorf("api source: debounce %s must not be negative", c.Debounce)
	}
	if c.OfflineAfter < 0 {
		return fmt.Errorf("api source: offlineAfter %s must not be negative", c.OfflineAfter)
	}
	if c.CheckpointDir != "" && !filepath.IsAbs(c.CheckpointDir) {
		return fmt.Errorf("api source: checkpointDir %q must be an absolute path", c.CheckpointDir)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Debounce == 0 {
		c.Debounce = 50 * time.Millisecond
	}
	if c.OfflineAfter == 0 {
		c.OfflineAfter = DefaultOfflineAfter
	}
	return c
}
