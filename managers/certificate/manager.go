package certificate

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	certificatesv1 "k8s.io/api/certificates/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/connrotation"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/internal/promutil"
)

// ErrNothingToRotate is returned by NewManager when the kubeconfig
// authenticates without a client certificate and there is no bootstrap
// kubeconfig: there is no certificate to renew.
var ErrNothingToRotate = errors.New("the kubeconfig has no client certificate and there is no bootstrap kubeconfig")

// certSource is what the Manager needs of client-go's certificate manager.
type certSource interface {
	Start()
	Stop()
	Current() *tls.Certificate
	ServerHealthy() bool
}

// Manager rotates the node's client certificate (client-go's certificate
// manager, at 70-90 % of its lifetime, through a CSR) and gives the API
// clients a transport that always presents the current one.
type Manager struct {
	certs  certSource
	clk    clock.WithTicker
	log    logr.Logger
	cfg    Config
	base   *rest.Config
	dialer *connrotation.Dialer
	rt     http.RoundTripper
	// closeAll closes the API connections; clients makes the CSR client
	// (both replaced in tests).
	closeAll func()
	clients  func(current *tls.Certificate) (kubernetes.Interface, error)
}

// NewManager returns the rotation manager for the credentials of rc, the
// node's kubeconfig (after Bootstrap). It reads the certificate store in
// cfg.CertDir, which it fills on first use with the kubeconfig's own
// certificate, and registers its metrics on reg; it starts nothing (see
// Run). It returns ErrNothingToRotate when there is no certificate to
// rotate.
func NewManager(rc *rest.Config, clk clock.WithTicker, reg prometheus.Registerer, log logr.Logger, cfg Config) (*Manager, error) {
	cfg = cfg.withDefaults()
	certPEM, keyPEM, err := clientPair(rc)
	if err != nil {
		return nil, fmt.Errorf("client certificate of the kubeconfig: %w", err)
	}
	if len(certPEM) == 0 && cfg.BootstrapKubeconfig == "" {
		return nil, ErrNothingToRotate
	}
	m := &Manager{clk: clk, log: log, cfg: cfg}
	if err := m.buildTransport(rc); err != nil {
		return nil, err
	}
	m.closeAll, m.clients = m.dialer.CloseAll, m.clientset
	store, err := certificate.NewFileStoreWithLogger(log.V(2), PairPrefix, cfg.CertDir, cfg.CertDir, "", "")
	if err != nil {
		return nil, fmt.Errorf("client certificate store in %s: %w", cfg.CertDir, err)
	}
	renewErrors := promutil.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kubelet_certificate_manager_client_expiration_renew_errors",
		Help: "Counter of certificate renewal errors.",
	}))
	// The certificate manager logs through this context's logger; it has
	// no Done channel, so it stops only through Stop.
	logCtx := klog.NewContext(context.Background(), log)
	cm, err := certificate.NewManager(&certificate.Config{
		ClientsetFn:             func(c *tls.Certificate) (kubernetes.Interface, error) { return m.clients(c) },
		Template:                &x509.CertificateRequest{Subject: clientSubject(cfg.NodeName)},
		SignerName:              certificatesv1.KubeAPIServerClientKubeletSignerName,
		GetUsages:               certificate.DefaultKubeletClientGetUsages,
		CertificateStore:        store,
		BootstrapCertificatePEM: certPEM,
		BootstrapKeyPEM:         keyPEM,
		CertificateRenewFailure: renewErrors,
		Name:                    "kubelet-client",
		Ctx:                     &logCtx,
	})
	if err != nil {
		return nil, fmt.Errorf("client certificate manager: %w", err)
	}
	m.certs = cm
	promutil.Register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "kubelet_certificate_manager_client_ttl_seconds",
		Help: "Seconds until the node's current client certificate expires (negative once expired, 0 without one).",
	}, m.ttlSeconds))
	return m, nil
}

// buildTransport makes the rotating transport for the server and CA of rc:
// each TLS handshake presents the manager's current certificate, and the
// dialer can close every connection when it changes.
func (m *Manager) buildTransport(rc *rest.Config) error {
	anon := rest.AnonymousClientConfig(rc)
	tlsConfig, err := rest.TLSConfigFor(anon)
	if err != nil {
		return fmt.Errorf("TLS settings of the kubeconfig: %w", err)
	}
	if tlsConfig == nil {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	tlsConfig.Certificates = nil
	tlsConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if c := m.Current(); c != nil {
			return c, nil
		}
		return &tls.Certificate{}, nil // no certificate: the request is anonymous
	}
	m.dialer = connrotation.NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
	m.rt = utilnet.SetTransportDefaults(&http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 25,
		DialContext:         m.dialer.DialContext,
	})
	anon.TLSClientConfig = rest.TLSClientConfig{}
	anon.Transport = m.rt
	m.base = anon
	return nil
}

// RESTConfig returns a copy of the kubeconfig's settings (QPS, user agent
// and timeouts kept) whose transport presents the current client
// certificate. Every client built from it shares one transport. Safe for
// concurrent use.
func (m *Manager) RESTConfig(rc *rest.Config) *rest.Config {
	out := rest.CopyConfig(m.base)
	out.QPS, out.Burst, out.UserAgent, out.Timeout = rc.QPS, rc.Burst, rc.UserAgent, rc.Timeout
	out.ContentConfig = rc.ContentConfig
	return out
}

// Current returns the current client certificate, or nil when there is
// none or it expired. The caller must not modify it. Safe for concurrent
// use.
func (m *Manager) Current() *tls.Certificate {
	if m.certs == nil {
		return nil
	}
	return m.certs.Current()
}

// clientset is the client that requests new certificates: the node's own
// credentials while they are valid, the bootstrap credentials (when set)
// once they are not.
func (m *Manager) clientset(current *tls.Certificate) (kubernetes.Interface, error) {
	if current == nil && m.cfg.BootstrapKubeconfig != "" {
		rc, err := clientcmd.BuildConfigFromFlags("", m.cfg.BootstrapKubeconfig)
		if err != nil {
			return nil, fmt.Errorf("bootstrap kubeconfig %s: %w", m.cfg.BootstrapKubeconfig, err)
		}
		return kubernetes.NewForConfig(rc)
	}
	return kubernetes.NewForConfig(rest.CopyConfig(m.base))
}

// ttlSeconds is the current certificate's remaining lifetime.
func (m *Manager) ttlSeconds() float64 {
	if m.certs == nil {
		return 0
	}
	c := m.certs.Current()
	if c == nil || c.Leaf == nil {
		return 0
	}
	return c.Leaf.NotAfter.Sub(m.clk.Now()).Seconds()
}

// Run starts the certificate manager and, every CheckPeriod, closes the
// API connections when the certificate changed, so that the next requests
// handshake with the new one. It returns nil when ctx ends, and
// ErrNoClientCertificate when the node had no valid certificate for
// ExitAfter while the API server answered (a restart then bootstraps
// again, as the kubelet's exit does). Call it once.
func (m *Manager) Run(ctx context.Context) error {
	m.certs.Start()
	defer m.certs.Stop()
	return m.watch(ctx)
}

// watch is Run's loop.
func (m *Manager) watch(ctx context.Context) error {
	t := m.clk.NewTicker(m.cfg.CheckPeriod)
	defer t.Stop()
	st := watchState{last: m.certs.Current(), lastValid: m.clk.Now()}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
		closeConns, err := m.step(&st, m.clk.Now(), m.certs.Current(), m.certs.ServerHealthy())
		if err != nil {
			return err
		}
		if closeConns {
			m.closeAll()
		}
	}
}

// watchState is what watch remembers between checks.
type watchState struct {
	last      *tls.Certificate // the certificate the connections use
	lastValid time.Time        // when there last was a valid certificate
	warned    bool             // the no-certificate warning was logged
}

// step decides, at now, what the current certificate cur means: close the
// connections (it changed), fail (none for ExitAfter while the API server
// answers: a restart bootstraps again), or nothing.
func (m *Manager) step(st *watchState, now time.Time, cur *tls.Certificate, serverHealthy bool) (closeConns bool, err error) {
	if cur == nil {
		if now.Sub(st.lastValid) < m.cfg.ExitAfter {
			return false, nil
		}
		if serverHealthy {
			return false, fmt.Errorf("%w since %s and the API server answers: restart the agent to bootstrap again", ErrNoClientCertificate, st.lastValid.UTC().Format(time.RFC3339))
		}
		if !st.warned {
			m.log.Info("No valid client certificate and the API server does not answer; a restart may be needed to bootstrap again", "since", st.lastValid)
			st.warned = true
		}
		return false, nil
	}
	st.lastValid, st.warned = now, false
	if cur == st.last {
		return false, nil
	}
	st.last = cur
	if cur.Leaf != nil {
		m.log.Info("Client certificate rotated; closing the API connections so that they use it", "notBefore", cur.Leaf.NotBefore, "notAfter", cur.Leaf.NotAfter)
	}
	return true, nil
}
