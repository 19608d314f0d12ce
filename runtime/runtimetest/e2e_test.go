//go:build e2e

package runtimetest

import (
	"os"
	"testing"
)

// The default runtime (runtime/cri) on the private containerd
// (hack/containerd-up.sh) passes the suite.
func TestCRIManagerOnContainerdPasses(t *testing.T) {
	endpoint, image := os.Getenv("NODEKIT_CRI_ENDPOINT"), os.Getenv("NODEKIT_TEST_IMAGE")
	if endpoint == "" || image == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("NODEKIT_CRI_ENDPOINT/NODEKIT_TEST_IMAGE unset: run hack/containerd-up.sh and source its env file")
		}
		t.Skip("no private containerd: run hack/containerd-up.sh and source /var/lib/nodekit-test/env")
	}
	Suite(t, CRIBackend(endpoint, image, os.Getenv("NODEKIT_CGROUP_PARENT")))
}
