package server

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
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
	cert, err := loadServingCert(cfg, client, logr.Discard())
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
