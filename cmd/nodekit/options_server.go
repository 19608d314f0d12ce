package main

import (
	"strconv"

	"github.com/spf13/pflag"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/server"
)

// serverOptions are the flags of the node's HTTP servers.
type serverOptions struct {
	readOnlyPort             optionalPort
	readOnlyOnAnyAddress     bool
	securePort               int
	secureAddress            string
	tlsCertFile, tlsKeyFile  string
	certDir                  string
	rotateServerCertificates bool
	clientCAFile             string
	anonymousAuth            bool
	healthzIncludeRuntime    bool
	hardening                hardeningOptions
}

// addServerFlags adds the flags of the secure server and of the read-only
// port's safety.
func (o *options) addServerFlags(fs *pflag.FlagSet) {
	s := &o.server
	fs.BoolVar(&s.readOnlyOnAnyAddress, "unauthenticated-read-only-port-on-any-address", false, "allow the read-only port, which serves pod specs to anyone with no authentication, on an --address that is not loopback")
	fs.StringVar(&s.secureAddress, "secure-address", "0.0.0.0", "IP address the secure port listens on (the node advertises its InternalIP to the API server, which dials it for logs, exec and stats)")
	fs.IntVar(&s.securePort, "secure-port", server.DefaultSecurePort, "port of the kubelet API over TLS with authentication and authorization through the API server (logs, exec, attach, port-forward); it runs only with --kubeconfig; 0 turns it off")
	fs.StringVar(&s.tlsCertFile, "tls-cert-file", "", "serving certificate of the secure port (default: a self-signed one in --cert-dir)")
	fs.StringVar(&s.tlsKeyFile, "tls-private-key-file", "", "key of --tls-cert-file")
	fs.StringVar(&s.certDir, "cert-dir", "", "directory of the self-signed and rotated serving certificates (default: ROOT-DIR/pki)")
	fs.BoolVar(&s.rotateServerCertificates, "rotate-server-certificates", false, "request the serving certificate with a kubernetes.io/kubelet-serving CertificateSigningRequest and renew it before it expires")
	fs.StringVar(&s.clientCAFile, "client-ca-file", "", "CA bundle that client certificates are verified against; without it, as the kubelet, client certificates are not accepted")
	fs.BoolVar(&s.anonymousAuth, "anonymous-auth", false, "let requests without credentials to the secure port through as system:anonymous (still authorized)")
	o.addHardeningFlags(fs)
	fs.BoolVar(&s.healthzIncludeRuntime, "healthz-include-runtime", false, "make /healthz fail when the runtime or PLEG check fails (the kubelet's does not: their health goes into the node's Ready condition; /healthz/runtime and /healthz/pleg always serve them)")
}

// applyServer sets cfg.Server from the flags. The read-only port defaults
// to server.DefaultPort standalone and to 0 (off) when the node joins a
// cluster, as the kubelet's readOnlyPort 0; --port is its old name.
func (o *options) applyServer(cfg *nodekit.Config) {
	s := &o.server
	switch {
	case s.readOnlyPort.set:
		cfg.Server.Port = s.readOnlyPort.v
	case o.port.set:
		cfg.Server.Port = o.port.v
	case o.kubeconfig != "":
		cfg.Server.Port = 0
	default:
		cfg.Server.Port = server.DefaultPort
	}
	cfg.Server.UnauthenticatedReadOnlyPortOnAnyAddress = s.readOnlyOnAnyAddress
	cfg.Server.SecurePort = s.securePort
	cfg.Server.SecureAddress = s.secureAddress
	cfg.Server.TLSCertFile = s.tlsCertFile
	cfg.Server.TLSPrivateKeyFile = s.tlsKeyFile
	cfg.Server.CertDir = s.certDir
	cfg.Server.RotateServerCertificates = s.rotateServerCertificates
	cfg.Server.ClientCAFile = s.clientCAFile
	cfg.Server.AnonymousAuth = s.anonymousAuth
	cfg.Server.HealthzIncludeRuntime = s.healthzIncludeRuntime
	s.hardening.apply(cfg)
}

// optionalPort is a port flag that records whether it was set, so that its
// default can depend on other flags.
type optionalPort struct {
	v   int
	set bool
}

func (p *optionalPort) String() string {
	if !p.set {
		return ""
	}
	return strconv.Itoa(p.v)
}

func (p *optionalPort) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return err
	}
	p.v, p.set = v, true
	return nil
}

func (p *optionalPort) Type() string { return "int" }
