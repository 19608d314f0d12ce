package server

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/nodekit/nodekit/managers/nodeip"
)

// A kubelet-serving CSR that an approver approves and a signer signs
// becomes the serving certificate.
func TestRotatedServingCertificateComesFromAKubeletServingCSR(t *testing.T) {
	ca := newTestCA(t)
	client := fake.NewClientset()
	requests := make(chan *certificatesv1.CertificateSigningRequest, 4)
	client.PrependReactor("create", "certificatesigningrequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		csr := a.(k8stesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest).DeepCopy()
		requests <- csr.DeepCopy()
		block, _ := pem.Decode(csr.Spec.Request)
		req, err := x509.ParseCertificateRequest(block.Bytes)
		if err != nil {
			return true, nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(7), Subject: req.Subject, DNSNames: req.DNSNames, IPAddresses: req.IPAddresses,
			NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		der, err := x509.CreateCertificate(nil, tmpl, ca.cert, req.PublicKey, ca.key)
		if err != nil {
			return true, nil, err
		}
		if csr.Name == "" {
			csr.Name = "csr-1"
		}
		csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, LastUpdateTime: metav1.Now(),
		}}
		csr.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		// Store it signed, so the manager's watch sees it approved.
		if err := client.Tracker().Add(csr); err != nil {
			return true, nil, err
		}
		return true, csr, nil
	})
	cfg := Config{NodeName: "node-1", NodeIP: "10.0.0.5", CertDir: t.TempDir(), RotateServerCertificates: true}.withDefaults()
	cert, err := loadServingCert(cfg, client, nil, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	defer cert.manager.Stop()

	select {
	case csr := <-requests:
		if csr.Spec.SignerName != certificatesv1.KubeletServingSignerName {
			t.Errorf("signerName = %q, want %q", csr.Spec.SignerName, certificatesv1.KubeletServingSignerName)
		}
		if !hasUsage(csr.Spec.Usages, certificatesv1.UsageServerAuth) || hasUsage(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
			t.Errorf("usages = %v, want server auth only", csr.Spec.Usages)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no CertificateSigningRequest within 30s")
	}
	// The manager stores the signed certificate on its own goroutine and
	// says nothing when done: poll for it.
	var got *tls.Certificate
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); <-tick.C {
		if got, _ = cert.getCertificate(nil); got != nil {
			break
		}
	}
	if got == nil || got.Leaf == nil {
		t.Fatalf("no serving certificate after the CSR was signed")
	}
	if got.Leaf.Subject.CommonName != "system:node:node-1" || got.Leaf.VerifyHostname("10.0.0.5") != nil || got.Leaf.VerifyHostname("node-1") != nil {
		t.Errorf("serving certificate for %q, names %v %v", got.Leaf.Subject.CommonName, got.Leaf.DNSNames, got.Leaf.IPAddresses)
	}
}

func hasUsage(us []certificatesv1.KeyUsage, u certificatesv1.KeyUsage) bool {
	for _, x := range us {
		if x == u {
			return true
		}
	}
	return false
}

func TestServingCertIsAnErrorUntilSigned(t *testing.T) {
	t.Parallel()
	c := &servingCert{manager: nilManager{}}
	if _, err := c.getCertificate(nil); err == nil {
		t.Error("getCertificate without a certificate returned none and no error")
	}
}

// nilManager is a certificate manager that has no certificate yet.
type nilManager struct{}

func (nilManager) Start()                    {}
func (nilManager) Stop()                     {}
func (nilManager) Current() *tls.Certificate { return nil }
func (nilManager) ServerHealthy() bool       { return false }

// The self-signed serving certificate names the node's addresses from the
// nodeip.Source, so that a client dialing the node's IP verifies it.
func TestSelfSignedCertificateNamesTheNodeIPs(t *testing.T) {
	t.Parallel()
	cfg := Config{NodeName: "node-1", NodeIP: "192.0.2.1", CertDir: t.TempDir()}
	src := nodeip.Static{"10.0.0.5", "fd00::5"}
	cert, err := loadServingCert(cfg, nil, src, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(cert.fixed.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	for _, der := range cert.fixed.Certificate[1:] {
		ca, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		roots.AddCert(ca)
	}
	for _, name := range []string{"10.0.0.5", "fd00::5", "node-1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots}); err != nil {
			t.Errorf("the certificate does not verify for %s: %v", name, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "192.0.2.1", Roots: roots}); err == nil {
		t.Errorf("the certificate names Config.NodeIP although the nodeip.Source gives the addresses")
	}
}

// A self-signed certificate made before an address was known (or by an
// older version) is made again once it does not name every node address;
// one that does is kept.
func TestSelfSignedCertificateIsRemadeForANewNodeIP(t *testing.T) {
	t.Parallel()
	cfg := Config{NodeName: "node-1", CertDir: t.TempDir()}
	certFile, _, err := ensureSelfSigned(cfg, nil, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	ip := nodeAddresses(cfg, nodeip.Static{"10.0.0.7"}, logr.Discard())
	if _, _, err := ensureSelfSigned(cfg, ip, logr.Discard()); err != nil {
		t.Fatal(err)
	}
	if missing, err := missingIPs(certFile, ip); err != nil || len(missing) != 0 {
		t.Fatalf("after a new address the certificate misses %v (%v)", missing, err)
	}
	before, _ := os.ReadFile(certFile)
	if _, _, err := ensureSelfSigned(cfg, ip, logr.Discard()); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(certFile); string(before) != string(after) {
		t.Error("a certificate that names every address was replaced")
	}
}

// The serving CSR names the node's addresses from the nodeip.Source; a
// source that knows none leaves them out instead of failing.
func TestServingCSRTemplateNamesTheSourcesAddresses(t *testing.T) {
	t.Parallel()
	cfg := Config{NodeName: "node-1", NodeIP: "192.0.2.1"}
	tmpl := servingCSRTemplate(cfg, nodeAddresses(cfg, nodeip.Static{"10.0.0.5", "fd00::5"}, logr.Discard()))
	if got := fmt.Sprint(tmpl.IPAddresses); got != "[10.0.0.5 fd00::5]" {
		t.Errorf("IP SANs = %s, want [10.0.0.5 fd00::5]", got)
	}
	if got := nodeAddresses(cfg, nodeip.Static(nil), logr.Discard()); len(got) != 0 {
		t.Errorf("addresses from a source that knows none = %v", got)
	}
}
