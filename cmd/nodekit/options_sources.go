package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/sources/apiserver"
)

// sourceOptions are the flags of the pod sources beyond the manifest
// directory: the API server source's checkpoint.
type sourceOptions struct {
	podCheckpoint        bool
	podCheckpointTimeout time.Duration
}

// addSourceFlags adds the flags of the pod sources.
func (o *options) addSourceFlags(fs *pflag.FlagSet) {
	s := &o.sources
	fs.BoolVar(&s.podCheckpoint, "pod-checkpoint", true, "keep a local copy of the pods the API server bound to this node (ROOT-DIR/pod-checkpoints) and run them from it when the API server does not answer at start; false keeps the kubelet's behaviour (no API pod runs until the API server answers)")
	fs.DurationVar(&s.podCheckpointTimeout, "pod-checkpoint-timeout", apiserver.DefaultOfflineAfter, "how long the agent waits at start for the API server's list of its pods before it runs the checkpointed pods offline")
}

// applySources sets the pod sources' settings of cfg from the flags.
func (o *options) applySources(cfg *nodekit.Config) {
	s := &o.sources
	cfg.DisablePodCheckpoint = !s.podCheckpoint
	cfg.APISource.OfflineAfter = s.podCheckpointTimeout
}
