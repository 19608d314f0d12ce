package sim

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Serve serves rs and is as the CRI v1 RuntimeService and ImageService over
// gRPC on l (usually a unix socket), so that crictl or an agent in another
// process can use them. Any implementation of the interfaces can be served;
// nodekit serves the simulated Runtime this way ("nodekit runtime-sim").
//
// Serve blocks until ctx ends or the server fails. When ctx ends, every call
// in flight is cancelled (event streams end) and the server stops
// gracefully; Serve then returns nil. It closes l.
func Serve(ctx context.Context, l net.Listener, rs criapi.RuntimeService, is criapi.ImageManagerService) error {
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(func(c context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			c, cancel := withStop(c, ctx)
			defer cancel()
			return h(c, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			c, cancel := withStop(ss.Context(), ctx)
			defer cancel()
			return h(srv, &stoppableStream{ServerStream: ss, ctx: c})
		}),
	)
	runtimeapi.RegisterRuntimeServiceServer(srv, &runtimeServer{rs: rs})
	runtimeapi.RegisterImageServiceServer(srv, &imageServer{is: is})
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve CRI on %s: %w", l.Addr(), err)
	case <-ctx.Done():
	}
	srv.GracefulStop()
	if err := <-errc; err != nil {
		return fmt.Errorf("serve CRI on %s: %w", l.Addr(), err)
	}
	return nil
}

// withStop returns a context of ctx that is also cancelled when stop ends.
func withStop(ctx, stop context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	unregister := context.AfterFunc(stop, cancel)
	return ctx, func() {
		unregister()
		cancel()
	}
}

// stoppableStream is a server stream whose context also ends with Serve's.
type stoppableStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *stoppableStream) Context() context.Context { return s.ctx }
