package prober

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func TestTCPProbe(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	cases := []struct {
		name   string
		port   int
		want   outcome
		output string
	}{
		{name: "a listening port succeeds", port: port(t, l.Addr()), want: outcomeSuccess},
		{name: "a closed port fails with the dial error", port: closedPort(t), want: outcomeFailure, output: "dial tcp 127.0.0.1:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, output, err := probeTCP(context.Background(), "127.0.0.1", tc.port, time.Second)
			if err != nil || got != tc.want || !strings.HasPrefix(output, tc.output) {
				t.Errorf("outcome %d %q %v, want %d with prefix %q", got, output, err, tc.want, tc.output)
			}
		})
	}
}

// startGRPC serves the health service (unless withHealth is false) on a
// local port until the test ends.
func startGRPC(t *testing.T, withHealth bool) (int, *health.Server) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	if withHealth {
		healthpb.RegisterHealthServer(srv, hs)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Stop(); <-done })
	return port(t, l.Addr()), hs
}

func TestGRPCProbe(t *testing.T) {
	t.Parallel()
	healthy, hs := startGRPC(t, true)
	hs.SetServingStatus("db", healthpb.HealthCheckResponse_NOT_SERVING)
	hs.SetServingStatus("api", healthpb.HealthCheckResponse_SERVING)
	bare, _ := startGRPC(t, false)
	cases := []struct {
		name    string
		port    int
		service string
		want    outcome
		output  string
	}{
		{name: "a SERVING server succeeds", port: healthy, want: outcomeSuccess, output: "service healthy"},
		{name: "a SERVING service succeeds", port: healthy, service: "api", want: outcomeSuccess, output: "service healthy"},
		{name: "a NOT_SERVING service fails", port: healthy, service: "db", want: outcomeFailure, output: `service unhealthy (responded with "NOT_SERVING")`},
		{name: "an unknown service fails", port: healthy, service: "nope", want: outcomeFailure, output: "error: health rpc probe failed: rpc error: code = NotFound"},
		{name: "a server without the health service fails", port: bare, want: outcomeFailure, output: "error: this server does not implement the grpc health protocol"},
		{name: "a closed port fails within the timeout", port: closedPort(t), want: outcomeFailure, output: "timeout: failed to connect service"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			timeout := 5 * time.Second
			if tc.want == outcomeFailure && tc.port != healthy && tc.port != bare {
				timeout = 100 * time.Millisecond
			}
			got, output, err := probeGRPC(context.Background(), "127.0.0.1", tc.port, tc.service, DefaultUserAgent, timeout)
			if err != nil || got != tc.want || !strings.HasPrefix(output, tc.output) {
				t.Errorf("outcome %d %q %v, want %d with prefix %q", got, output, err, tc.want, tc.output)
			}
		})
	}
}

// benchGRPC serves the health service until the benchmark ends.
func benchGRPC(b *testing.B) int {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l) }()
	b.Cleanup(func() { srv.Stop(); <-done })
	return port(b, l.Addr())
}
