package server

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// DefaultPort is the kubelet's read-only port. The server does not apply it
// on its own, because Port 0 turns the read-only server off; nodekit's
// default configuration and the CLI set it.
const DefaultPort = 10255

// DefaultSecurePort is the kubelet's authenticated port.
const DefaultSecurePort = 10250

// Config configures the read-only server and the secure server. The zero
// value is valid and means both are turned off.
type Config struct {
	// Address is the IP address or host name the read-only server listens
	// on. Defaults to "127.0.0.1".
	Address string `json:"address,omitempty"`
	// SecureAddress is the IP address or host name the secure server
	// listens on. The node advertises its InternalIP and SecurePort to the
	// API server, which dials it for logs, exec and stats, so the default
	// is every address, as the kubelet's --address. Defaults to "0.0.0.0".
	SecureAddress string `json:"secureAddress,omitempty"`
	// Port is the read-only port: /pods, /healthz and /metrics over plain
	// HTTP with no authentication. 0 turns it off. Defaults to 0 (off);
	// nodekit's CLI sets DefaultPort (10255) for a standalone node and 0
	// for one that joins a cluster, as the kubelet's readOnlyPort 0.
	Port int `json:"port,omitempty"`
	// UnauthenticatedReadOnlyPortOnAnyAddress allows the read-only port on
	// an Address that is not a loopback address. The read-only port serves
	// full pod specs, literal env values included, to anyone who can reach
	// it; without this setting such an address is refused. Defaults to
	// false.
	UnauthenticatedReadOnlyPortOnAnyAddress bool `json:"unauthenticatedReadOnlyPortOnAnyAddress,omitempty"`

	// SecurePort is the kubelet API port: TLS, every request authenticated
	// and authorized through the API server. 0 turns it off; it needs a
	// Kubernetes client (a joined cluster). Defaults to 0 (off); nodekit's
	// default configuration sets DefaultSecurePort (10250).
	SecurePort int `json:"securePort,omitempty"`
	// TLSCertFile and TLSPrivateKeyFile are the secure server's serving
	// certificate and key. Without both (and without
	// RotateServerCertificates) a self-signed certificate is made once in
	// CertDir as kubelet.crt and kubelet.key, as the kubelet does.
	// Defaults to none.
	TLSCertFile       string `json:"tlsCertFile,omitempty"`
	TLSPrivateKeyFile string `json:"tlsPrivateKeyFile,omitempty"`
	// CertDir holds the self-signed and the rotated serving certificates.
	// Defaults to RootDir/pki.
	CertDir string `json:"certDir,omitempty"`
	// RotateServerCertificates requests the serving certificate from the
	// API server with a kubernetes.io/kubelet-serving
	// CertificateSigningRequest and renews it before it expires. Someone
	// (an approver) must approve the request. Defaults to false.
	RotateServerCertificates bool `json:"rotateServerCertificates,omitempty"`
	// ClientCAFile is the CA bundle that client certificates are verified
	// against. Without it, as the kubelet, client certificates are not
	// asked for and not accepted: every request needs a bearer token (or
	// AnonymousAuth). Defaults to none.
	ClientCAFile string `json:"clientCAFile,omitempty"`
	// AnonymousAuth lets requests without credentials through as
	// system:anonymous (authorization still applies). Defaults to false:
	// they get 401.
	AnonymousAuth bool `json:"anonymousAuth,omitempty"`
	// AuthenticationCacheTTL is how long a TokenReview answer is cached.
	// Defaults to 2m, the kubelet's.
	AuthenticationCacheTTL time.Duration `json:"authenticationCacheTTL,omitempty"`
	// AuthorizationAllowedCacheTTL and AuthorizationDeniedCacheTTL are how
	// long SubjectAccessReview answers are cached. Default to 5m and 30s,
	// the kubelet's.
	AuthorizationAllowedCacheTTL time.Duration `json:"authorizationAllowedCacheTTL,omitempty"`
	AuthorizationDeniedCacheTTL  time.Duration `json:"authorizationDeniedCacheTTL,omitempty"`

	// TLSMinVersion is the secure port's lowest TLS version, by its Go
	// constant name (the kubelet's tlsMinVersion): VersionTLS12 or
	// VersionTLS13; the older versions are refused. Defaults to
	// VersionTLS12.
	TLSMinVersion string `json:"tlsMinVersion,omitempty"`
	// TLSCipherSuites are the TLS 1.2 cipher suites the secure port allows,
	// by their IANA names (the kubelet's tlsCipherSuites, parsed as its
	// --tls-cipher-suites); an unknown name, or one Go lists as insecure
	// (RC4, 3DES, CBC with SHA-256), is refused. TLS 1.3 suites are not
	// configurable. Defaults to DefaultTLSCipherSuites: ECDHE with AES-GCM
	// or ChaCha20-Poly1305 only, no CBC suite (the kubelet's default is
	// Go's, which has the CBC-SHA1 suites).
	TLSCipherSuites []string `json:"tlsCipherSuites,omitempty"`
	// EnableProfilingHandler serves /debug/pprof/ on the secure port, GET
	// only (the kubelet's enableProfilingHandler). False answers 405
	// "profiling endpoint is disabled.". Defaults to true, the kubelet's.
	EnableProfilingHandler *bool `json:"enableProfilingHandler,omitempty"`
	// EnableSystemLogHandler serves the files of SystemLogDir under /logs/
	// on the secure port, GET only (the kubelet's enableSystemLogHandler;
	// authorized as nodes/log). False answers 405 "logs endpoint is
	// disabled.". Defaults to true, the kubelet's.
	EnableSystemLogHandler *bool `json:"enableSystemLogHandler,omitempty"`
	// EnableDebugFlagsHandler serves /debug/flags/v, where a PUT of a
	// number sets the agent's log verbosity (the kubelet's
	// enableDebugFlagsHandler). It needs SecureDeps.Verbosity: true
	// without one is an error at start, unset without one is off. False
	// answers 405 "flags endpoint is disabled.". Defaults to true, the
	// kubelet's.
	EnableDebugFlagsHandler *bool `json:"enableDebugFlagsHandler,omitempty"`
	// StreamingConnectionIdleTimeout closes an exec, attach or
	// port-forward connection proxied through the secure port when no byte
	// has passed either way for this long (the kubelet's
	// streamingConnectionIdleTimeout; the runtime's own streaming server
	// has its idle timeout too). Defaults to 4h, the kubelet's; there is
	// no "never".
	StreamingConnectionIdleTimeout time.Duration `json:"streamingConnectionIdleTimeout,omitempty"`
	// SystemLogDir is the directory /logs/ serves. Defaults to /var/log,
	// the kubelet's.
	SystemLogDir string `json:"systemLogDir,omitempty"`

	// HealthzIncludeRuntime makes the aggregate /healthz fail when the
	// checks named "runtime" or "pleg" fail. The kubelet's /healthz does not
	// (their health goes into the node's Ready condition), so a supervisor
	// that restarts the agent on a failing /healthz does not restart it for
	// the runtime's fault (a hung or restarting containerd also fails the
	// PLEG's relists); /healthz/runtime and /healthz/pleg always serve the
	// checks. Defaults to false.
	HealthzIncludeRuntime bool `json:"healthzIncludeRuntime,omitempty"`

	// ReadHeaderTimeout bounds how long a client may take to send a
	// request's headers. Defaults to 10s.
	ReadHeaderTimeout time.Duration `json:"readHeaderTimeout,omitempty"`
	// IdleTimeout closes a keep-alive connection idle this long. Defaults
	// to 90s, the kubelet's.
	IdleTimeout time.Duration `json:"idleTimeout,omitempty"`
	// ReadTimeout and WriteTimeout bound a whole request and its response.
	// They must leave room for streams (logs -f, exec). Default to 4h, the
	// kubelet's.
	ReadTimeout  time.Duration `json:"readTimeout,omitempty"`
	WriteTimeout time.Duration `json:"writeTimeout,omitempty"`
	// ShutdownTimeout bounds the graceful shutdown once Run's context ends;
	// connections still open after it are closed. Defaults to 5s.
	ShutdownTimeout time.Duration `json:"shutdownTimeout,omitempty"`

	// NodeName, NodeIP, RootDir and Kubeconfig are the agent's settings
	// (nodekit's composition root copies them): the node whose API is
	// served (authorization names it), the serving certificate's names,
	// and where CertDir defaults to. Kubeconfig is not read: client
	// certificates are verified against ClientCAFile only, never against
	// the kubeconfig's cluster CA, as the kubelet. Default to none.
	NodeName   string `json:"-"`
	NodeIP     string `json:"-"`
	RootDir    string `json:"-"`
	Kubeconfig string `json:"-"`
}

// Disabled reports whether the configuration turns the read-only server
// off (Port 0).
func (c Config) Disabled() bool {
	return c.Port == 0
}

// SecureDisabled reports whether the configuration turns the secure server
// off (SecurePort 0).
func (c Config) SecureDisabled() bool {
	return c.SecurePort == 0
}

// Validate checks the configuration and returns an error naming the first
// invalid field.
func (c Config) Validate() error {
	for name, p := range map[string]int{"port": c.Port, "securePort": c.SecurePort} {
		if p < 0 || p > 65535 {
			return fmt.Errorf("server %s %d: must be between 0 and 65535", name, p)
		}
	}
	if c.Port != 0 && c.Port == c.SecurePort {
		return fmt.Errorf("server port and securePort are both %d: they must differ", c.Port)
	}
	if c.Address != "" && net.ParseIP(c.Address) == nil {
		if errs := validation.IsDNS1123Subdomain(c.Address); len(errs) > 0 {
			return fmt.Errorf("server address %q: not an IP address or host name: %s",
				c.Address, strings.Join(errs, "; "))
		}
	}
	if c.SecureAddress != "" && net.ParseIP(c.SecureAddress) == nil {
		if errs := validation.IsDNS1123Subdomain(c.SecureAddress); len(errs) > 0 {
			return fmt.Errorf("server secureAddress %q: not an IP address or host name: %s",
				c.SecureAddress, strings.Join(errs, "; "))
		}
	}
	if c.Port != 0 {
		if err := c.checkReadOnlyAddress(); err != nil {
			return err
		}
	}
	if (c.TLSCertFile == "") != (c.TLSPrivateKeyFile == "") {
		return fmt.Errorf("server tlsCertFile %q and tlsPrivateKeyFile %q: set both or neither", c.TLSCertFile, c.TLSPrivateKeyFile)
	}
	if c.RotateServerCertificates && c.TLSCertFile != "" {
		return fmt.Errorf("server rotateServerCertificates and tlsCertFile %q: choose one", c.TLSCertFile)
	}
	for name, d := range map[string]time.Duration{
		"readHeaderTimeout": c.ReadHeaderTimeout, "idleTimeout": c.IdleTimeout,
		"readTimeout": c.ReadTimeout, "writeTimeout": c.WriteTimeout, "shutdownTimeout": c.ShutdownTimeout,
		"authenticationCacheTTL": c.AuthenticationCacheTTL, "authorizationAllowedCacheTTL": c.AuthorizationAllowedCacheTTL,
		"authorizationDeniedCacheTTL":    c.AuthorizationDeniedCacheTTL,
		"streamingConnectionIdleTimeout": c.StreamingConnectionIdleTimeout,
	} {
		if d < 0 {
			return fmt.Errorf("server %s %v: must not be negative", name, d)
		}
	}
	if _, _, err := c.tlsSettings(); err != nil {
		return err
	}
	return nil
}

// checkReadOnlyAddress refuses the unauthenticated read-only port on an
// address other hosts can reach, unless allowed explicitly.
func (c Config) checkReadOnlyAddress() error {
	if c.UnauthenticatedReadOnlyPortOnAnyAddress || c.Address == "" || isLoopback(c.Address) {
		return nil
	}
	return fmt.Errorf("server address %q is not a loopback address: the read-only port %d serves pod specs with no authentication; "+
		"listen on 127.0.0.1, turn the read-only port off (port 0), or allow it explicitly with unauthenticatedReadOnlyPortOnAnyAddress "+
		"(--unauthenticated-read-only-port-on-any-address)", c.Address, c.Port)
}

// isLoopback reports whether addr is a loopback IP or "localhost".
func isLoopback(addr string) bool {
	if addr == "localhost" {
		return true
	}
	ip := net.ParseIP(addr)
	return ip != nil && ip.IsLoopback()
}

// withDefaults fills the unset fields. It leaves the ports alone: 0 means
// off.
func (c Config) withDefaults() Config {
	if c.Address == "" {
		c.Address = "127.0.0.1"
	}
	if c.SecureAddress == "" {
		c.SecureAddress = "0.0.0.0"
	}
	setDuration(&c.ReadHeaderTimeout, 10*time.Second)
	setDuration(&c.IdleTimeout, 90*time.Second)
	setDuration(&c.ReadTimeout, 4*time.Hour)
	setDuration(&c.WriteTimeout, 4*time.Hour)
	setDuration(&c.ShutdownTimeout, 5*time.Second)
	setDuration(&c.AuthenticationCacheTTL, 2*time.Minute)
	setDuration(&c.AuthorizationAllowedCacheTTL, 5*time.Minute)
	setDuration(&c.AuthorizationDeniedCacheTTL, 30*time.Second)
	setDuration(&c.StreamingConnectionIdleTimeout, 4*time.Hour)
	if c.SystemLogDir == "" {
		c.SystemLogDir = "/var/log"
	}
	if c.CertDir == "" && c.RootDir != "" {
		c.CertDir = filepath.Join(c.RootDir, "pki")
	}
	return c
}

func setDuration(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

// httpServer is an http.Server with the configured timeouts, as the
// kubelet's (1 MiB of headers at most).
func (c Config) httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: c.ReadHeaderTimeout,
		IdleTimeout:       c.IdleTimeout,
		ReadTimeout:       c.ReadTimeout,
		WriteTimeout:      c.WriteTimeout,
		MaxHeaderBytes:    1 << 20,
	}
}
