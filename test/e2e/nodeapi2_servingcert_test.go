//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodekit/nodekit"
)

// servingCertLifetime is how long the certificates the test signs last:
// client-go's certificate manager renews at 70-90 % of the lifetime.
const servingCertLifetime = 90 * time.Second

// TestRotateServerCertificatesRequestsServesAndRenews is issue 13's "with
// --rotate-server-certificates, a serving certificate requested through a
// kubernetes.io/kubelet-serving CertificateSigningRequest and renewed
// before expiry": the agent, joined on node credentials, creates such a
// CSR for system:node:NODE; the test approves it as the admin and, as the
// lab has no controller-manager, signs it with the cluster CA (a 90 s
// certificate) and sets status.certificate; the secure port then serves
// exactly that certificate (serial, issuer, verifying against the CA for
// the node's name); before it expires the agent asks again with a new
// CSR, and once that is signed the secure port serves the new one.
func TestRotateServerCertificatesRequestsServesAndRenews(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	h.configure = func(cfg *nodekit.Config) { cfg.Server.RotateServerCertificates = true }
	h.joinCluster(c)
	ca := loadClusterCA(t, filepath.Dir(c.caFile))
	h.start()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(h.securePort))

	first := signNextServingCSR(t, c, h.node, ca, nil)
	t.Logf("signed %s: serial %s, valid until %s", first.csr, first.cert.SerialNumber, first.cert.NotAfter.Format(time.TimeOnly))
	waitServed(t, addr, first.cert, ca, h.node, time.Minute)

	second := signNextServingCSR(t, c, h.node, ca, []string{first.csr})
	renewedAt := time.Now()
	if !renewedAt.Before(first.cert.NotAfter) {
		t.Errorf("the renewal CSR came at %s, after the first certificate expired at %s", renewedAt, first.cert.NotAfter)
	}
	t.Logf("renewal %s signed %s before the first expired: serial %s", second.csr, first.cert.NotAfter.Sub(renewedAt).Round(time.Second), second.cert.SerialNumber)
	waitServed(t, addr, second.cert, ca, h.node, time.Until(first.cert.NotAfter)+10*time.Second)
}

type servingCA struct {
	cert *x509.Certificate
	key  any
}

func loadClusterCA(t *testing.T, pki string) servingCA {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(pki, "ca.crt"), filepath.Join(pki, "ca.key"))
	if err != nil {
		t.Fatalf("cluster CA: %v", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return servingCA{cert: cert, key: pair.PrivateKey}
}

type signedCSR struct {
	csr  string
	cert *x509.Certificate
}

// signNextServingCSR waits (at most the first certificate's lifetime and
// a minute) for a kubelet-serving CSR of the node not in done, checks it
// is the node's, approves it and signs it.
func signNextServingCSR(t *testing.T, c clusterEnv, node string, ca servingCA, done []string) signedCSR {
	t.Helper()
	ctx := context.Background()
	var csr *certificatesv1.CertificateSigningRequest
	within(t, servingCertLifetime+time.Minute, "a kubernetes.io/kubelet-serving CSR from the node", func() bool {
		list, err := c.admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for i := range list.Items {
			r := &list.Items[i]
			if r.Spec.SignerName == certificatesv1.KubeletServingSignerName && r.Spec.Username == "system:node:"+node &&
				!slices.Contains(done, r.Name) {
				csr = r
				return true
			}
		}
		return false
	})
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil {
		t.Fatalf("CSR %s: no PEM request", csr.Name)
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatalf("CSR %s: %v", csr.Name, err)
	}
	if req.Subject.CommonName != "system:node:"+node || !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("CSR %s subject %s, want CN=system:node:%s O=system:nodes", csr.Name, req.Subject, node)
	}
	if !slices.Contains(req.DNSNames, node) || len(req.IPAddresses) == 0 {
		t.Errorf("CSR %s names %v %v, want the node name and its IP addresses", csr.Name, req.DNSNames, req.IPAddresses)
	}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageServerAuth) || !slices.Contains(csr.Spec.Usages, certificatesv1.UsageDigitalSignature) {
		t.Errorf("CSR %s usages %v, want server auth and digital signature", csr.Name, csr.Spec.Usages)
	}

	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "E2EApprove", Message: "approved by the e2e test",
	})
	csr, err = c.admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("approve CSR: %v", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: req.Subject, DNSNames: req.DNSNames, IPAddresses: req.IPAddresses,
		NotBefore: now, NotAfter: now.Add(servingCertLifetime),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, req.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	csr.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if _, err := c.admin.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("sign CSR: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return signedCSR{csr: csr.Name, cert: cert}
}

// waitServed waits until the secure port serves want, and checks that it
// verifies against the cluster CA for the node's name.
func waitServed(t *testing.T, addr string, want *x509.Certificate, ca servingCA, node string, limit time.Duration) {
	t.Helper()
	var last string
	var got *x509.Certificate
	if limit < time.Minute {
		limit = time.Minute
	}
	within(t, limit, fmt.Sprintf("the secure port to serve serial %s", want.SerialNumber), func() bool {
		d := &net.Dialer{Timeout: 5 * time.Second}
		conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			last = err.Error()
			return false
		}
		defer conn.Close()
		got = conn.ConnectionState().PeerCertificates[0]
		last = "serial " + got.SerialNumber.String() + " from " + got.Issuer.String()
		return got.SerialNumber.Cmp(want.SerialNumber) == 0
	})
	if got.Issuer.String() != ca.cert.Subject.String() {
		t.Errorf("served issuer %s, want the cluster CA %s", got.Issuer, ca.cert.Subject)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	if _, err := got.Verify(x509.VerifyOptions{Roots: roots, DNSName: node}); err != nil {
		t.Errorf("served certificate does not verify for %s against the cluster CA: %v (last: %s)", node, err, last)
	}
}
