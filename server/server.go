package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
)

// PodLister lists the pods the node runs, with their spec and their latest
// status.
type PodLister interface {
	// GetPods returns the node's pods. It must not block for long and must
	// be safe for concurrent use. The lister keeps ownership of the returned
	// pods and must not mutate them after returning them; the server only
	// reads them.
	GetPods() []*corev1.Pod
}

// HealthCheck is one named check behind /healthz, such as "syncloop",
// "pleg" or "runtime".
type HealthCheck interface {
	// Name names the check in /healthz output and in the /healthz/<name>
	// route. Names should be unique.
	Name() string
	// Check returns nil when healthy, or an error saying why not. It must
	// be safe for concurrent use and return quickly.
	Check() error
}

// Server is the node's read-only HTTP server. Its methods are safe for
// concurrent use.
type Server struct {
	log     logr.Logger
	cfg     Config
	handler http.Handler
	mux     *http.ServeMux // handler's routes; ServeStats adds to them

	mu   sync.Mutex
	addr net.Addr
}

// New returns a server that reads pods from pods, runs checks for /healthz
// and exposes gatherer on /metrics. A nil pods or gatherer leaves its route
// out (404).
// It does no I/O; call Run or Serve to serve. The server keeps checks but
// does not modify it.
func New(pods PodLister, checks []HealthCheck, gatherer prometheus.Gatherer, log logr.Logger, cfg Config) *Server {
	log = log.WithName("server")
	mux := newHandler(pods, checks, gatherer, log, cfg.HealthzIncludeRuntime)
	return &Server{
		log:     log,
		cfg:     cfg.withDefaults(),
		handler: mux,
		mux:     mux,
	}
}

// Handler returns the server's routes, for httptest or for mounting in
// another server. It is the same handler on every call.
func (s *Server) Handler() http.Handler {
	return s.handler
}

// Addr returns the address the server listens on, or nil before Run or
// Serve started listening.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Run listens on the configured address and serves until ctx ends, then
// shuts down gracefully. It returns nil on a clean stop, an error naming the
// address if it cannot listen, and nil at once (after logging) when the
// configuration turns the server off.
func (s *Server) Run(ctx context.Context) error {
	if s.cfg.Disabled() {
		s.log.Info("read-only server is turned off", "port", s.cfg.Port)
		return nil
	}
	if err := s.cfg.checkReadOnlyAddress(); err != nil {
		return err
	}
	addr := net.JoinHostPort(s.cfg.Address, strconv.Itoa(s.cfg.Port))
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return s.Serve(ctx, l)
}

// Serve serves on l until ctx ends, then shuts down gracefully for at most
// Config.ShutdownTimeout and closes the connections left. It takes ownership
// of l and closes it. It returns nil once stopped after ctx ended (a forced
// close is logged), or an error naming the address if serving fails before.
// Call it at most once per Server.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	s.mu.Lock()
	s.addr = l.Addr()
	s.mu.Unlock()

	return serve(ctx, s.log, s.cfg, s.handler, l)
}

// serve serves h on l with cfg's timeouts until ctx ends, then shuts down
// gracefully for at most cfg.ShutdownTimeout and closes what is left.
func serve(ctx context.Context, log logr.Logger, cfg Config, h http.Handler, l net.Listener) error {
	srv := cfg.httpServer(h)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	log.Info("serving", "address", l.Addr().String())

	select {
	case err := <-done:
		return fmt.Errorf("serve on %s: %w", l.Addr(), err)
	case <-ctx.Done():
	}

	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Error(err, "graceful shutdown did not finish, closing connections",
			"address", l.Addr().String(), "timeout", cfg.ShutdownTimeout)
		_ = srv.Close()
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve on %s: %w", l.Addr(), err)
	}
	log.Info("stopped serving", "address", l.Addr().String())
	return nil
}
