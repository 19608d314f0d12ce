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
	// The runtime's server runs for the whole test: its accept loop may
	// start after the baseline is taken, so it is left out by name. The
	// server's per-connection goroutines end once the client has closed.
	opts := []goleak.Option{
		goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("google.golang.org/grpc.(*Server).Serve"),
		goleak.IgnoreAnyFunction("github.com/nodekit/nodekit/runtime/sim.Serve"),
	}
	if got := runtimeCgroupDriver(t.Context(), cfg, logr.Discard()); got != "cgroupfs" {
		t.Fatalf("cgroup driver %q, want the runtime's cgroupfs", got)
	}
	// A closed connection's goroutines wind down asynchronously, slowly on a
	// loaded machine: poll with a generous deadline. A connection left open
	// keeps them for ever.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := goleak.Find(opts...)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the connection that asked for the cgroup driver is still open after 30 s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
