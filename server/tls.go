package server

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"path/filepath"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/keyutil"
)

// Names of the self-signed serving certificate in CertDir, as the
// kubelet's.
const (
	selfSignedCertName = "kubelet.crt"
	selfSignedKeyName  = "kubelet.key"
)

// servingCert is where the secure server's certificate comes from: a fixed
// pair, or a certificate manager that rotates it.
type servingCert struct {
	fixed   *tls.Certificate
	manager certificate.Manager
}

// getCertificate implements tls.Config.GetCertificate.
func (c *servingCert) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c.fixed != nil {
		return c.fixed, nil
	}
	if cert := c.manager.Current(); cert != nil {
		return cert, nil
	}
	return nil, errors.New("no serving certificate available for the node yet: the kubelet-serving CSR is not approved and signed")
}

// loadServingCert returns the configured certificate, or with
// RotateServerCertificates a started certificate manager (the caller stops
// it), or else the self-signed certificate in CertDir, made on first use.
func loadServingCert(cfg Config, client kubernetes.Interface, log logr.Logger) (*servingCert, error) {
	switch {
	case cfg.TLSCertFile != "":
		cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSPrivateKeyFile)
		if err != nil {
			return nil, fmt.Errorf("load serving certificate %s and key %s: %w", cfg.TLSCertFile, cfg.TLSPrivateKeyFile, err)
		}
		return &servingCert{fixed: &cert}, nil
	case cfg.RotateServerCertificates:
		m, err := newCertificateManager(cfg, client)
		if err != nil {
			return nil, err
		}
		log.Info("requesting the serving certificate through a CertificateSigningRequest",
			"signerName", certificatesv1.KubeletServingSignerName, "certDir", cfg.CertDir)
		m.Start()
		return &servingCert{manager: m}, nil
	}
	certFile, keyFile, err := ensureSelfSigned(cfg, log)
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load self-signed serving certificate %s: %w", certFile, err)
	}
	return &servingCert{fixed: &cert}, nil
}

// ensureSelfSigned makes CertDir/kubelet.crt and kubelet.key unless both can
// be read, as the kubelet does: a certificate for the node name (and the
// node IP) signed by a CA made for it.
func ensureSelfSigned(cfg Config, log logr.Logger) (certFile, keyFile string, err error) {
	if cfg.CertDir == "" {
		return "", "", errors.New("server certDir is not set: cannot make a self-signed serving certificate")
	}
	certFile = filepath.Join(cfg.CertDir, selfSignedCertName)
	keyFile = filepath.Join(cfg.CertDir, selfSignedKeyName)
	if ok, _ := certutil.CanReadCertAndKey(certFile, keyFile); ok {
		return certFile, keyFile, nil
	}
	host := cfg.NodeName
	if host == "" {
		host = "localhost"
	}
	var ips []net.IP
	if ip := net.ParseIP(cfg.NodeIP); ip != nil {
		ips = append(ips, ip)
	}
	cert, key, err := certutil.GenerateSelfSignedCertKey(host, ips, nil)
	if err != nil {
		return "", "", fmt.Errorf("generate self-signed serving certificate: %w", err)
	}
	if err := certutil.WriteCert(certFile, cert); err != nil {
		return "", "", fmt.Errorf("write %s: %w", certFile, err)
	}
	if err := keyutil.WriteKey(keyFile, key); err != nil {
		return "", "", fmt.Errorf("write %s: %w", keyFile, err)
	}
	log.Info("made a self-signed serving certificate", "cert", certFile, "key", keyFile)
	return certFile, keyFile, nil
}

// newCertificateManager returns client-go's certificate manager for the
// serving certificate, as the kubelet's: signer kubernetes.io/kubelet-serving,
// subject system:node:NAME in system:nodes, the node's name and IP as
// subject alternative names, stored in CertDir as kubelet-server-*.pem.
func newCertificateManager(cfg Config, client kubernetes.Interface) (certificate.Manager, error) {
	if client == nil {
		return nil, errors.New("server rotateServerCertificates needs a Kubernetes client (a kubeconfig)")
	}
	store, err := certificate.NewFileStore("kubelet-server", cfg.CertDir, cfg.CertDir, "", "")
	if err != nil {
		return nil, fmt.Errorf("serving certificate store in %s: %w", cfg.CertDir, err)
	}
	m, err := certificate.NewManager(&certificate.Config{
		ClientsetFn:      func(*tls.Certificate) (kubernetes.Interface, error) { return client, nil },
		Template:         servingCSRTemplate(cfg),
		SignerName:       certificatesv1.KubeletServingSignerName,
		GetUsages:        certificate.DefaultKubeletServingGetUsages,
		CertificateStore: store,
		Name:             "kubelet-serving",
	})
	if err != nil {
		return nil, fmt.Errorf("serving certificate manager: %w", err)
	}
	return m, nil
}

// servingCSRTemplate is the CSR the node asks its serving certificate with.
func servingCSRTemplate(cfg Config) *x509.CertificateRequest {
	t := &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:" + cfg.NodeName, Organization: []string{"system:nodes"}},
	}
	if ip := net.ParseIP(cfg.NodeIP); ip != nil {
		t.IPAddresses = []net.IP{ip}
	}
	if cfg.NodeName != "" && net.ParseIP(cfg.NodeName) == nil {
		t.DNSNames = []string{cfg.NodeName}
	}
	return t
}
