package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/managers/nodeip"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// SecureDeps are what the secure server reads. Client is required for it
// to run; a nil Runtime, or one without the optional capabilities
// (runtime.Streamer, runtime.LogReader, runtime.CommandRunner), makes the
// routes that need them answer 501.
type SecureDeps struct {
	// Pods lists the node's pods (/pods, and the pods that logs, exec,
	// attach and port-forward look up).
	Pods PodLister
	// Checks are the /healthz checks.
	Checks []HealthCheck
	// Gatherer is served on /metrics, and its prober_* families on
	// /metrics/probes. Nil leaves both out.
	Gatherer prometheus.Gatherer
	// Client answers TokenReviews and SubjectAccessReviews and, with
	// Config.RotateServerCertificates, signs the serving certificate.
	Client kubernetes.Interface
	// Runtime lists running pods (/runningpods/) and serves the container
	// routes through its capabilities.
	Runtime noderuntime.Runtime
	// Configz is encoded as JSON under "nodekit" on /configz. Nil leaves
	// the route out.
	Configz any
	// Clock is the time log options are computed at. Defaults to the real
	// clock.
	Clock clock.Clock
	// NodeIPs gives the node's IP addresses, which the serving certificate
	// (self-signed or requested) names. Nil: Config.NodeIP.
	NodeIPs nodeip.Source
	// Verbosity sets the log verbosity for /debug/flags/v. Nil: the route
	// is off (an error at start when Config.EnableDebugFlagsHandler is
	// set to true).
	Verbosity VerbositySetter
}

// SecureServer is the kubelet API on the secure port: TLS, and every
// request authenticated and authorized through the API server. Its methods
// are safe for concurrent use.
type SecureServer struct {
	log  logr.Logger
	cfg  Config
	deps SecureDeps

	mu    sync.Mutex
	addr  net.Addr
	stats StatsProvider // set by ServeStats
}

// NewSecure returns the secure server. It does no I/O: certificates are
// loaded or made, and the client CA read, when Run or Serve starts.
func NewSecure(deps SecureDeps, log logr.Logger, cfg Config) *SecureServer {
	if deps.Clock == nil {
		deps.Clock = clock.RealClock{}
	}
	return &SecureServer{log: log.WithName("secure-server"), cfg: cfg.withDefaults(), deps: deps}
}

// Addr returns the address the server listens on, or nil before it does.
func (s *SecureServer) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Run listens on Address:SecurePort and serves until ctx ends. It returns
// nil at once (after logging) when SecurePort is 0 or there is no
// Kubernetes client to authenticate and authorize with, and an error
// naming the address when it cannot listen.
func (s *SecureServer) Run(ctx context.Context) error {
	if s.cfg.SecureDisabled() {
		s.log.Info("secure server is turned off", "securePort", 0)
		return nil
	}
	if s.deps.Client == nil {
		s.log.Info("secure server is off: it authenticates and authorizes through the API server, and no kubeconfig is set",
			"securePort", s.cfg.SecurePort)
		return nil
	}
	addr := net.JoinHostPort(s.cfg.SecureAddress, strconv.Itoa(s.cfg.SecurePort))
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return s.Serve(ctx, l)
}

// Serve serves TLS on l until ctx ends; it takes ownership of l. It fails
// when the serving certificate or the authenticator cannot be set up.
func (s *SecureServer) Serve(ctx context.Context, l net.Listener) error {
	handler, cert, err := s.build()
	if err != nil {
		_ = l.Close()
		return err
	}
	if cert.manager != nil {
		defer cert.manager.Stop()
	}
	tlsCfg, err := s.cfg.tlsConfig(cert.getCertificate)
	if err != nil {
		_ = l.Close()
		return fmt.Errorf("secure server: %w", err)
	}
	s.logTLS(tlsCfg)
	s.mu.Lock()
	s.addr = l.Addr()
	s.mu.Unlock()
	return serve(ctx, s.log, s.cfg, handler, tls.NewListener(l, tlsCfg))
}

// build loads the serving certificate and the authenticator and returns
// the authenticated routes.
func (s *SecureServer) build() (http.Handler, *servingCert, error) {
	if s.deps.Client == nil {
		return nil, nil, fmt.Errorf("secure server: no Kubernetes client to authenticate and authorize with")
	}
	if explicitlyOn(s.cfg.EnableDebugFlagsHandler) && s.deps.Verbosity == nil {
		return nil, nil, fmt.Errorf("secure server: enableDebugFlagsHandler is true but the agent's logger cannot change its verbosity at run time (no SecureDeps.Verbosity)")
	}
	auth, err := newNodeAuth(s.cfg, s.deps.Client, s.log)
	if err != nil {
		return nil, nil, fmt.Errorf("secure server: %w", err)
	}
	cert, err := loadServingCert(s.cfg, s.deps.Client, s.deps.NodeIPs, s.log)
	if err != nil {
		return nil, nil, fmt.Errorf("secure server: %w", err)
	}
	return auth.filter(s.routes()), cert, nil
}

// routes are the secure port's handlers, before authentication.
func (s *SecureServer) routes() *http.ServeMux {
	mux := http.NewServeMux()
	s.register(mux)
	return mux
}

// register adds the secure port's routes to mux.
func (s *SecureServer) register(mux router) {
	h := &handlers{pods: s.deps.Pods, checks: s.deps.Checks, log: s.log, includeRuntime: s.cfg.HealthzIncludeRuntime}
	h.register(mux, s.deps.Gatherer)
	if s.deps.Gatherer != nil {
		mux.Handle("GET /metrics/probes", promhttp.HandlerFor(prefixGatherer{s.deps.Gatherer, "prober_"}, promhttp.HandlerOpts{}))
	}
	st := &streams{pods: s.deps.Pods, runtime: s.deps.Runtime, clk: s.deps.Clock, log: s.log,
		idleTimeout: s.cfg.StreamingConnectionIdleTimeout}
	st.register(mux)
	s.registerStats(mux)
	mux.HandleFunc("GET /runningpods/", s.serveRunningPods)
	if s.deps.Configz != nil {
		mux.HandleFunc("GET /configz", s.serveConfigz)
	}
	s.registerDebug(mux)
}

// logTLS logs the secure port's TLS settings, and the weak suites the
// configuration allows.
func (s *SecureServer) logTLS(c *tls.Config) {
	if weak := s.cfg.weakCipherSuites(); len(weak) > 0 && c.MinVersion < tls.VersionTLS13 {
		s.log.Info("weak TLS cipher suites allowed by tlsCipherSuites (CBC with a SHA-1 MAC)", "cipherSuites", weak)
	}
	if c.MinVersion == tls.VersionTLS13 && len(s.cfg.TLSCipherSuites) > 0 {
		s.log.Info("tlsCipherSuites ignored: TLS 1.3 cipher suites are not configurable", "tlsMinVersion", s.cfg.TLSMinVersion)
	}
	s.log.Info("secure port TLS", "minVersion", tls.VersionName(c.MinVersion), "cipherSuites", cipherSuiteNames(c.CipherSuites),
		"clientCertificates", c.ClientAuth == tls.RequestClientCert)
}

// serveRunningPods lists the pods the runtime runs, as the kubelet's
// /runningpods/: a PodList with names, UIDs and containers only.
func (s *SecureServer) serveRunningPods(w http.ResponseWriter, r *http.Request) {
	if s.deps.Runtime == nil {
		http.Error(w, "no runtime", http.StatusNotImplemented)
		return
	}
	pods, err := s.deps.Runtime.GetPods(r.Context(), false)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: []corev1.Pod{}}
	for _, p := range pods {
		pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.ID}}
		for _, c := range p.Containers {
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: c.Name, Image: c.Image})
		}
		list.Items = append(list.Items, pod)
	}
	writeJSON(w, s.log, &list)
}

// serveConfigz writes the agent's configuration, the values of its HTTP
// headers redacted (see redactConfigz).
func (s *SecureServer) serveConfigz(w http.ResponseWriter, _ *http.Request) {
	v, err := redactConfigz(s.deps.Configz)
	if err != nil {
		s.log.Error(err, "cannot encode the configuration")
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, s.log, map[string]any{"nodekit": v})
}

func writeJSON(w http.ResponseWriter, log logr.Logger, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		log.Error(err, "cannot encode a response")
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// prefixGatherer gathers only the families whose name has the prefix, as
// the kubelet's separate /metrics/probes registry holds only the prober's.
type prefixGatherer struct {
	g      prometheus.Gatherer
	prefix string
}

// Gather implements prometheus.Gatherer.
func (p prefixGatherer) Gather() ([]*dto.MetricFamily, error) {
	all, err := p.g.Gather()
	var out []*dto.MetricFamily
	for _, mf := range all {
		if strings.HasPrefix(mf.GetName(), p.prefix) || mf.GetName() == "process_start_time_seconds" {
			out = append(out, mf)
		}
	}
	return out, err
}
