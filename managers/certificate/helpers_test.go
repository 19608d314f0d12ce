package certificate

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/keyutil"
)

// testCA signs certificates for the tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// sign issues a client certificate for pub and subject valid from
// notBefore to notAfter.
func (ca *testCA) sign(t *testing.T, pub any, subject pkix.Name, notBefore, notAfter time.Time) []byte {
	t.Helper()
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: subject, NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// keyPair makes a key and a certificate for it, PEM-encoded.
func (ca *testCA) keyPair(t *testing.T, subject pkix.Name, notBefore, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	return ca.sign(t, &key.PublicKey, subject, notBefore, notAfter), keyPEM
}

// signingClient is a fake clientset whose CSRs are approved and signed by
// ca on creation (valid for life); it records them.
func signingClient(t *testing.T, ca *testCA, life time.Duration) (*fake.Clientset, *[]*certificatesv1.CertificateSigningRequest) {
	client := fake.NewClientset()
	var created []*certificatesv1.CertificateSigningRequest
	client.PrependReactor("create", "certificatesigningrequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		csr := a.(k8stesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
		block, _ := pem.Decode(csr.Spec.Request)
		req, err := x509.ParseCertificateRequest(block.Bytes)
		if err != nil {
			t.Errorf("CSR %s: %v", csr.Name, err)
			return false, nil, nil
		}
		if csr.Name == "" { // the fake tracker does not generate names
			csr.Name = fmt.Sprintf("%s%d", csr.GenerateName, len(created))
		}
		created = append(created, csr.DeepCopy())
		csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
		csr.Status.Certificate = ca.sign(t, req.PublicKey, req.Subject, time.Now().Add(-time.Minute), time.Now().Add(life))
		return false, nil, nil // the tracker stores the signed object
	})
	return client, &created
}

// writeCertKubeconfig writes a kubeconfig for https://127.0.0.1:1 with the
// CA and the given client pair inline (certPEM nil: a token instead).
func writeCertKubeconfig(t *testing.T, path string, ca *testCA, certPEM, keyPEM []byte) {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1", CertificateAuthorityData: ca.pem}
	auth := &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	if certPEM == nil {
		auth = &clientcmdapi.AuthInfo{Token: "abcdef.0123456789abcdef"}
	}
	kc.AuthInfos["u"] = auth
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "c"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
}

// emptyStore is a certificate store with nothing in it.
type emptyStore struct{}

func (emptyStore) Current() (*tls.Certificate, error) {
	e := certificate.NoCertKeyError("no certificate")
	return nil, &e
}

func (emptyStore) Update(_, _ []byte) (*tls.Certificate, error) {
	return nil, errors.New("emptyStore is read-only")
}
