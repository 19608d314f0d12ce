package main

import (
	"testing"
	"time"

	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/pleg/plegtest"
)

// A user-written PLEG is checked by the same conformance suite as nodekit's
// own: here on the simulated runtime with a fake clock. SnapshotPLEG sends
// PodSync events, not the kubelet's per-container ones, so the suite only
// requires an event naming the pod (Options.KubeletEvents is false).
func TestSnapshotPLEGPassesTheConformanceSuite(t *testing.T) {
	plegtest.Suite(t, func(env plegtest.Env) pleg.Interface {
		return NewSnapshotPLEG(env.Runtime, env.Cache, env.Clock, env.Log, 200*time.Millisecond)
	}, plegtest.Options{})
}
