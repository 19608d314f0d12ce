//go:build e2e

package main

import (
	"os"
	"testing"
	"time"

	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/pleg/plegtest"
)

// The same suite on the private containerd (hack/containerd-up.sh).
func TestSnapshotPLEGPassesTheConformanceSuiteOnContainerd(t *testing.T) {
	endpoint, image := os.Getenv("NODEKIT_CRI_ENDPOINT"), os.Getenv("NODEKIT_TEST_IMAGE")
	if endpoint == "" || image == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("NODEKIT_CRI_ENDPOINT/NODEKIT_TEST_IMAGE unset: run hack/containerd-up.sh and source its env file")
		}
		t.Skip("no private containerd: run hack/containerd-up.sh and source /var/lib/nodekit-test/env")
	}
	b := plegtest.CRIBackend(endpoint, image, os.Getenv("NODEKIT_CGROUP_PARENT"))
	plegtest.SuiteOn(t, b, func(env plegtest.Env) pleg.Interface {
		return NewSnapshotPLEG(env.Runtime, env.Cache, env.Clock, env.Log, 200*time.Millisecond)
	}, plegtest.Options{})
}
