package server

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/keyutil"

	"github.com/nodekit/nodekit/managers/nodeip"
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
func loadServingCert(cfg Config, client kubernetes.Interface, ips nodeip.Source, log logr.Logger) (*servingCert, error) {
	switch {
	case cfg.TLSCertFile != "":
		cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSPrivateKeyFile)
		if err != nil {
			return nil, fmt.Errorf("load serving certificate %s and key %s: %w", cfg.TLSCertFile, cfg.TLSPrivateKeyFile, err)
		}
		return &servingCert{fixed: &cert}, nil
	case cfg.RotateServerCertificates:
		m, err := newCertificateManager(cfg, client, ips, log)
		if err != nil {
			return nil, err
		}
		log.Info("requesting the serving certificate through a CertificateSigningRequest",
			"signerName", certificatesv1.KubeletServingSignerName, "certDir", cfg.CertDir)
		m.Start()
		return &servingCert{manager: m}, nil
	}
	certFile, keyFile, err := ensureSelfSigned(cfg, nodeAddresses(cfg, ips, log), log)
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
// be read and the certificate names every address in ips, as the kubelet
// makes its self-signed pair: a certificate for the node name signed by a
// CA made for it. Unlike the kubelet's, it also names the node's IP
// addresses, so that a client dialing the node by IP (the API server
// proxying `kubectl logs` to the node's InternalIP) can verify it against
// the CA; a pair made before an address was known is made again.
func ensureSelfSigned(cfg Config, ips []net.IP, log logr.Logger) (certFile, keyFile string, err error) {
	if cfg.CertDir == "" {
		return "", "", errors.New("server certDir is not set: cannot make a self-signed serving certificate")
	}
	certFile = filepath.Join(cfg.CertDir, selfSignedCertName)
	keyFile = filepath.Join(cfg.CertDir, selfSignedKeyName)
	if ok, _ := certutil.CanReadCertAndKey(certFile, keyFile); ok {
		missing, err := missingIPs(certFile, ips)
		if err == nil && len(missing) == 0 {
			return certFile, keyFile, nil
		}
		log.Info("making the self-signed serving certificate again: it does not name every node address", "cert", certFile,
			"missing", missing, "err", errString(err))
	}
	host := cfg.NodeName
	if host == "" {
		host = "localhost"
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
	log.Info("made a self-signed serving certificate", "cert", certFile, "key", keyFile, "ips", ips)
	return certFile, keyFile, nil
}

// missingIPs returns the addresses of ips that the first certificate in
// certFile does not name.
func missingIPs(certFile string, ips []net.IP) ([]net.IP, error) {
	certs, err := certutil.CertsFromFile(certFile)
	if err != nil {
		return nil, err
	}
	var missing []net.IP
	for _, ip := range ips {
		if !slices.ContainsFunc(certs[0].IPAddresses, ip.Equal) {
			missing = append(missing, ip)
		}
	}
	return missing, nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// nodeAddresses are the IP addresses the serving certificate names: the
// node's addresses from ips (the agent's one nodeip.Source, which the
// node status also reports), else Config.NodeIP. An error of the source is
// logged and leaves the addresses out.
func nodeAddresses(cfg Config, ips nodeip.Source, log logr.Logger) []net.IP {
	var out []net.IP
	if ips != nil {
		addrs, err := ips.NodeIPs()
		if err != nil {
			log.Info("the serving certificate names no node IP address", "err", err.Error())
		}
		for _, a := range addrs {
			if ip := net.ParseIP(a); ip != nil {
				out = append(out, ip)
			}
		}
		return out
	}
	if ip := net.ParseIP(cfg.NodeIP); ip != nil {
		out = append(out, ip)
	}
	return out
}

// newCertificateManager returns client-go's certificate manager for the
// serving certificate, as the kubelet's: signer kubernetes.io/kubelet-serving,
// subject system:node:NAME in system:nodes, the node's name and IP
// addresses as subject alternative names (read again at every check, so a
// changed address is requested anew, as the kubelet's template follows the
// node's status addresses), stored in CertDir as kubelet-server-*.pem.
func newCertificateManager(cfg Config, client kubernetes.Interface, ips nodeip.Source, log logr.Logger) (certificate.Manager, error) {
	if client == nil {
		return nil, errors.New("server rotateServerCertificates needs a Kubernetes client (a kubeconfig)")
	}
	store, err := certificate.NewFileStore("kubelet-server", cfg.CertDir, cfg.CertDir, "", "")
	if err != nil {
		return nil, fmt.Errorf("serving certificate store in %s: %w", cfg.CertDir, err)
	}
	m, err := certificate.NewManager(&certificate.Config{
		ClientsetFn:      func(*tls.Certificate) (kubernetes.Interface, error) { return client, nil },
		GetTemplate:      func() *x509.CertificateRequest { return servingCSRTemplate(cfg, nodeAddresses(cfg, ips, log)) },
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
func servingCSRTemplate(cfg Config, ips []net.IP) *x509.CertificateRequest {
	t := &x509.CertificateRequest{
		Subject:     pkix.Name{CommonName: "system:node:" + cfg.NodeName, Organization: []string{"system:nodes"}},
		IPAddresses: ips,
	}
	if cfg.NodeName != "" && net.ParseIP(cfg.NodeName) == nil {
		t.DNSNames = []string{cfg.NodeName}
	}
	return t
}
