package main

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/runtime/sim"
)

// Asking the runtime for its cgroup driver closes the connection it opened:
// the agent asks once at start and must not keep a second gRPC connection
// (and its goroutines) to the runtime for its whole life.
func TestTheCgroupDriverQueryClosesItsConnection(t *testing.T) {
	rt := sim.New(testingclock.NewFakeClock(time.Unix(1700000000, 0)), logr.Discard(), sim.Config{})
	linux := &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_CGROUPFS}
	cfg := nodekit.Config{Runtime: nodekit.RuntimeCRI, RuntimeEndpoint: serveRuntime(t, driverRuntime{rt, linux})}
	before := goleak.IgnoreCurrent()
	if got := runtimeCgroupDriver(t.Context(), cfg, logr.Discard()); got != "cgroupfs" {
		t.Fatalf("cgroup driver %q, want the runtime's cgroupfs", got)
	}
	goleak.VerifyNone(t, before)
}
