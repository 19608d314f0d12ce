package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine they started is still
// running once they are done.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// k8s.io/cri-client v0.37.2's RemoteRuntimeServiceBuilder.Build does
		// not close the gRPC connection it made when the runtime fails its
		// version check, as in the unreachable-runtime case of
		// TestTheCgroupDriverIsTheRuntimes; nothing outside it can. A
		// connection nodekit opens is checked by
		// TestTheCgroupDriverQueryClosesItsConnection instead.
		goleak.IgnoreTopFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
		goleak.IgnoreTopFunction("google.golang.org/grpc.(*addrConn).resetTransportAndUnlock"),
	)
}
