package certificate

import (
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/utils/clock"
)

// retryPeriod is how long the bootstrap waits before it creates the CSR
// again after the API server refused or did not answer.
const retryPeriod = 5 * time.Second

// Bootstrap is the TLS bootstrap. With cfg.BootstrapKubeconfig set and
// cfg.Kubeconfig missing, unreadable, without a client certificate or with
// an expired one, it requests the node's client certificate with the
// bootstrap credentials, waits until the CSR is approved and signed (at most
// cfg.BootstrapTimeout), stores the pair in cfg.CertDir and writes
// cfg.Kubeconfig to use it. Otherwise it does nothing. It blocks; it is
// idempotent (a restart reuses the pending request's key and name).
func Bootstrap(ctx context.Context, clk clock.Clock, log logr.Logger, cfg Config) error {
	if cfg.BootstrapKubeconfig == "" {
		return nil
	}
	cfg = cfg.withDefaults()
	reason := kubeconfigValid(cfg.Kubeconfig, clk.Now())
	if reason == nil {
		log.V(2).Info("Kubeconfig is valid, no TLS bootstrap", "kubeconfig", cfg.Kubeconfig)
		return nil
	}
	log.Info("Using the bootstrap kubeconfig to request the node's client certificate", "reason", reason.Error(), "bootstrapKubeconfig", cfg.BootstrapKubeconfig)
	bootRC, err := clientcmd.BuildConfigFromFlags("", cfg.BootstrapKubeconfig)
	if err != nil {
		return fmt.Errorf("bootstrap kubeconfig %s: %w", cfg.BootstrapKubeconfig, err)
	}
	client, err := kubernetes.NewForConfig(bootRC)
	if err != nil {
		return fmt.Errorf("bootstrap client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.BootstrapTimeout)
	defer cancel()
	return bootstrapWith(ctx, clk, log, client, bootRC, cfg)
}

// bootstrapWith requests the certificate through client and writes the
// pair and the kubeconfig.
func bootstrapWith(ctx context.Context, clk clock.Clock, log logr.Logger, client kubernetes.Interface, bootRC *rest.Config, cfg Config) error {
	if err := os.MkdirAll(cfg.CertDir, 0o700); err != nil {
		return fmt.Errorf("cert dir: %w", err)
	}
	store, err := certificate.NewFileStoreWithLogger(log.V(2), PairPrefix, cfg.CertDir, cfg.CertDir, "", "")
	if err != nil {
		return fmt.Errorf("client certificate store in %s: %w", cfg.CertDir, err)
	}
	keyPEM, err := bootstrapKey(store, cfg.CertDir, clk.Now())
	if err != nil {
		return err
	}
	certPEM, err := requestClientCertificate(ctx, clk, log, client, keyPEM, cfg.NodeName)
	if err != nil {
		return err
	}
	if _, err := store.Update(certPEM, keyPEM); err != nil {
		return fmt.Errorf("store the client certificate in %s: %w", cfg.CertDir, err)
	}
	if err := os.Remove(filepath.Join(cfg.CertDir, tmpKeyFile)); err != nil && !os.IsNotExist(err) {
		log.Info("Could not remove the bootstrap key", "err", err.Error())
	}
	if err := writeKubeconfig(bootRC, cfg.Kubeconfig, store.CurrentPath()); err != nil {
		return err
	}
	log.Info("TLS bootstrap done: wrote the node's kubeconfig", "kubeconfig", cfg.Kubeconfig, "certificate", store.CurrentPath())
	return nil
}

// bootstrapKey is the key of the request: the current pair's while its
// certificate is valid (as the kubelet), else the pending one kept in
// CertDir, made on first use so that a restart requests the same CSR.
func bootstrapKey(store certificate.Store, certDir string, now time.Time) ([]byte, error) {
	if cert, err := store.Current(); err == nil && cert.PrivateKey != nil && cert.Leaf != nil && now.Before(cert.Leaf.NotAfter) {
		if b, err := keyutil.MarshalPrivateKeyToPEM(cert.PrivateKey); err == nil {
			return b, nil
		}
	}
	b, _, err := keyutil.LoadOrGenerateKeyFile(filepath.Join(certDir, tmpKeyFile))
	if err != nil {
		return nil, fmt.Errorf("bootstrap key: %w", err)
	}
	return b, nil
}

// requestClientCertificate creates the node's client CSR (retrying while
// the API server refuses or does not answer) and waits for its
// certificate.
func requestClientCertificate(ctx context.Context, clk clock.Clock, log logr.Logger, client kubernetes.Interface, keyPEM []byte, node string) ([]byte, error) {
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("parse the bootstrap key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("bootstrap key of type %T cannot sign", key)
	}
	subject := clientSubject(node)
	csrPEM, err := certutil.MakeCSR(key, &subject, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("make the client CSR: %w", err)
	}
	usages := certificate.DefaultKubeletClientGetUsages(key)
	name, err := csrName(signer.Public(), subject, usages)
	if err != nil {
		return nil, err
	}
	for {
		reqName, uid, err := csr.RequestCertificateWithContext(ctx, client, csrPEM, name, certificatesv1.KubeAPIServerClientKubeletSignerName, nil, usages, key)
		if err == nil {
			log.Info("Waiting for the client certificate: the CSR must be approved and signed", "csr", reqName)
			crt, err := csr.WaitForCertificate(ctx, client, reqName, uid)
			if err != nil {
				return nil, fmt.Errorf("wait for the client certificate of CSR %s: %w", reqName, err)
			}
			return crt, nil
		}
		log.Info("Could not create the client CSR; retrying", "csr", name, "err", err.Error(), "retryIn", retryPeriod)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("create the client CSR %s: %w (last error: %v)", name, ctx.Err(), err)
		case <-clk.After(retryPeriod):
		}
	}
}

// clientSubject is the node client certificate's subject.
func clientSubject(node string) pkix.Name {
	return pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}
}

// csrName names the bootstrap CSR after what it asks for, so that the same
// key asks with the same name after a restart (and gets the same request
// back instead of a second one).
func csrName(pub crypto.PublicKey, subject pkix.Name, usages []certificatesv1.KeyUsage) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("encode the bootstrap public key: %w", err)
	}
	h := sha256.New()
	field := func(b []byte) { h.Write([]byte(fmt.Sprintf("%d:", len(b)))); h.Write(b) }
	field(der)
	field([]byte(subject.CommonName))
	for _, o := range subject.Organization {
		field([]byte(o))
	}
	for _, u := range usages {
		field([]byte(u))
	}
	return "node-csr-" + hex.EncodeToString(h.Sum(nil)), nil
}

// kubeconfigValid returns nil when path is a kubeconfig with a readable
// client certificate and key, none of whose certificates expired at now;
// else the reason.
func kubeconfigValid(path string, now time.Time) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	certPEM, keyPEM, err := clientPair(rc)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	if len(certPEM) == 0 {
		return fmt.Errorf("kubeconfig %s has no client certificate", path)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return fmt.Errorf("kubeconfig %s: client certificate and key: %w", path, err)
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: client certificate: %w", path, err)
	}
	for _, c := range certs {
		if !now.Before(c.NotAfter) {
			return fmt.Errorf("kubeconfig %s: client certificate expired at %s", path, c.NotAfter.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// clientPair returns the client certificate and key of rc, read from their
// files when not inline.
func clientPair(rc *rest.Config) (certPEM, keyPEM []byte, err error) {
	certPEM, keyPEM = rc.CertData, rc.KeyData
	if len(certPEM) == 0 && rc.CertFile != "" {
		if certPEM, err = os.ReadFile(rc.CertFile); err != nil {
			return nil, nil, err
		}
	}
	if len(keyPEM) == 0 && rc.KeyFile != "" {
		if keyPEM, err = os.ReadFile(rc.KeyFile); err != nil {
			return nil, nil, err
		}
	}
	return certPEM, keyPEM, nil
}

// writeKubeconfig writes, atomically, a kubeconfig for the server and CA
// of bootRC whose client certificate and key are both in pemPath.
func writeKubeconfig(bootRC *rest.Config, path, pemPath string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["default-cluster"] = &clientcmdapi.Cluster{
		Server:                   bootRC.Host,
		CertificateAuthority:     bootRC.CAFile,
		CertificateAuthorityData: bootRC.CAData,
		TLSServerName:            bootRC.ServerName,
		InsecureSkipTLSVerify:    bootRC.Insecure,
	}
	kc.AuthInfos["default-auth"] = &clientcmdapi.AuthInfo{ClientCertificate: pemPath, ClientKey: pemPath}
	kc.Contexts["default-context"] = &clientcmdapi.Context{Cluster: "default-cluster", AuthInfo: "default-auth", Namespace: "default"}
	kc.CurrentContext = "default-context"
	b, err := clientcmd.Write(*kc)
	if err != nil {
		return fmt.Errorf("encode kubeconfig: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return errors.Join(fmt.Errorf("write kubeconfig %s: %w", path, err), os.Remove(tmp))
	}
	return nil
}
