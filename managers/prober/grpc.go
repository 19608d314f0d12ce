package prober

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// probeGRPC calls grpc.health.v1.Health/Check on host:port over a plaintext
// connection of its own, within timeout: SERVING succeeds; any other status,
// a connection failure, a timeout or a server without the health service
// fails. (The alpha TLS mode of gRPC probes is not supported.)
func probeGRPC(ctx context.Context, host string, port int, service, userAgent string, timeout time.Duration) (outcome, string, error) {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUserAgent(userAgent),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return probeDialer().DialContext(ctx, "tcp", addr)
		}),
	)
	if err != nil {
		return outcomeFailure, fmt.Sprintf("error: failed to connect service at %q: %v", addr, err), nil
	}
	defer func() { _ = conn.Close() }()

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx,
		&healthpb.HealthCheckRequest{Service: service}, grpc.WaitForReady(true))
	if err != nil {
		switch status.Code(err) {
		case codes.Unimplemented:
			return outcomeFailure, "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): " + status.Convert(err).Message(), nil
		case codes.DeadlineExceeded:
			if conn.GetState() != connectivity.Ready {
				return outcomeFailure, fmt.Sprintf("timeout: failed to connect service %q within %v", addr, timeout), nil
			}
			return outcomeFailure, fmt.Sprintf("timeout: health rpc did not complete within %v", timeout), nil
		}
		return outcomeFailure, fmt.Sprintf("error: health rpc probe failed: %v", err), nil
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return outcomeFailure, fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus().String()), nil
	}
	return outcomeSuccess, "service healthy", nil
}
