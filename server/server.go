package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
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

// DefaultPort is the kubelet's read-only port. The server does not apply it
// on its own, because Port 0 turns the server off; nodekit's default
// configuration and the CLI set it.
const DefaultPort = 10255

// Config configures the server. The zero value is valid and means a server
// that is turned off.
type Config struct {
	// Address is the IP address or host name to listen on. Defaults to
	// "127.0.0.1".
	Address string `json:"address,omitempty"`
	// Port is the TCP port to listen on. 0 turns the server off, as
	// `--port 0` does; nodekit's default configuration sets DefaultPort
	// (10255). Defaults to 0 (off).
	Port int `json:"port,omitempty"`
	// ReadHeaderTimeout bounds how long a client may take to send a
	// request's headers. Defaults to 10s.
	ReadHeaderTimeout time.Duration `json:"readHeaderTimeout,omitempty"`
	// ShutdownTimeout bounds the graceful shutdown once Run's context ends;
	// connections still open after it are closed. Defaults to 5s.
	ShutdownTimeout time.Duration `json:"shutdownTimeout,omitempty"`
}

// Disabled reports whether the configuration turns the server off (Port 0).
func (c Config) Disabled() bool {
	return c.Port == 0
}

// Validate checks the configuration and returns an error naming the first
// invalid field.
func (c Config) Validate() error {
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("server port %d: must be between 0 and 65535", c.Port)
	}
	if c.Address != "" && net.ParseIP(c.Address) == nil {
		if errs := validation.IsDNS1123Subdomain(c.Address); len(errs) > 0 {
			return fmt.Errorf("server address %q: not an IP address or host name: %s",
				c.Address, strings.Join(errs, "; "))
		}
	}
	if c.ReadHeaderTimeout < 0 {
		return fmt.Errorf("server readHeaderTimeout %v: must not be negative", c.ReadHeaderTimeout)
	}
	if c.ShutdownTimeout < 0 {
		return fmt.Errorf("server shutdownTimeout %v: must not be negative", c.ShutdownTimeout)
	}
	return nil
}

// withDefaults fills the unset fields. It leaves Port alone: 0 means off.
func (c Config) withDefaults() Config {
	if c.Address == "" {
		c.Address = "127.0.0.1"
	}
	if c.ReadHeaderTimeout == 0 {
		c.ReadHeaderTimeout = 10 * time.Second
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 5 * time.Second
	}
	return c
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
	mux := newHandler(pods, checks, gatherer, log)
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
		s.log.Info("server is turned off", "port", s.cfg.Port)
		return nil
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

	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	s.log.Info("serving", "address", l.Addr().String())

	select {
	case err := <-done:
		return fmt.Errorf("serve on %s: %w", l.Addr(), err)
	case <-ctx.Done():
	}

	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		s.log.Error(err, "graceful shutdown did not finish, closing connections",
			"address", l.Addr().String(), "timeout", s.cfg.ShutdownTimeout)
		_ = srv.Close()
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve on %s: %w", l.Addr(), err)
	}
	s.log.Info("stopped serving", "address", l.Addr().String())
	return nil
}
