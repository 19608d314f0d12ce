//go:build e2e

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Issue 13, acceptance 4: the secure port answers 401 to an anonymous
// client, 403 to a service account without node rights, 200 to the API
// server's kubelet client certificate and to a user bound to
// system:kubelet-api-admin; the node advertises it.
func TestNodeAPISecurePortAuthentication(t *testing.T) {
	h, c, ns := joinedAgent(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	url := fmt.Sprintf("https://127.0.0.1:%d/pods", h.securePort)
	// The secure server makes its self-signed certificate as it starts.
	roots := x509.NewCertPool()
	var pemBytes []byte
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if pemBytes, err = os.ReadFile(filepath.Join(h.rootDir, "pki", "kubelet.crt")); err == nil {
			break
		}
	}
	if err != nil || !roots.AppendCertsFromPEM(pemBytes) {
		t.Fatalf("the self-signed serving certificate in ROOT/pki: %v", err)
	}
	get := func(token string, cert *tls.Certificate) (int, string) {
		t.Helper()
		tc := &tls.Config{RootCAs: roots, ServerName: h.node}
		if cert != nil {
			tc.Certificates = []tls.Certificate{*cert}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: tc}}).Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	if code, body := get("", nil); code != http.StatusUnauthorized {
		t.Errorf("anonymous: %d %q, want 401", code, body)
	}

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nobody", Namespace: ns}}
	if _, err := c.admin.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok, err := c.admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "nobody", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for the service account: %v", err)
	}
	if code, body := get(tok.Status.Token, nil); code != http.StatusForbidden || !strings.Contains(body, "system:serviceaccount:"+ns+":nobody") {
		t.Errorf("service account without node rights: %d %q, want 403 naming it", code, body)
	}

	pki := filepath.Dir(c.caFile)
	apiserverCert, err := tls.LoadX509KeyPair(filepath.Join(pki, "apiserver-kubelet-client.crt"), filepath.Join(pki, "apiserver-kubelet-client.key"))
	if err != nil {
		t.Fatalf("the API server's kubelet client certificate: %v", err)
	}
	if code, body := get("", &apiserverCert); code != http.StatusOK || !strings.Contains(body, `"kind":"PodList"`) {
		t.Errorf("API server's kubelet client certificate: %d %q, want 200 and a PodList", code, body)
	}

	user := "kubelet-api-user-" + ns
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:kubelet-api-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}},
	}
	if _, err := c.admin.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.admin.RbacV1().ClusterRoleBindings().Delete(context.Background(), user, metav1.DeleteOptions{})
	})
	userCert := signClientCert(t, pki, user)
	// The binding reaches the authorizer's cache within a moment; a denial
	// is cached 30 s, so ask only once the binding is visible to a review.
	deadline := time.Now().Add(time.Minute)
	code, body := get("", &userCert)
	for code != http.StatusOK && time.Now().Before(deadline) {
		time.Sleep(2 * time.Second)
		code, body = get("", &userCert)
	}
	if code != http.StatusOK {
		t.Errorf("user bound to system:kubelet-api-admin: %d %q, want 200", code, body)
	}

	node, err := c.admin.CoreV1().Nodes().Get(ctx, h.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := node.Status.DaemonEndpoints.KubeletEndpoint.Port; int(p) != h.securePort {
		t.Errorf("daemonEndpoints.kubeletEndpoint.port = %d, want the secure port %d", p, h.securePort)
	}
	// The API server's nodes/proxy refuses a loopback node address
	// ("address not allowed"), so /api/v1/nodes/NODE/proxy is out of reach
	// here; logs, exec and port-forward (other tests) go through it.
}

// signClientCert makes a client certificate for user signed by the cluster
// CA in pki (ca.crt, ca.key).
func signClientCert(t *testing.T, pki, user string) tls.Certificate {
	t.Helper()
	ca, err := tls.LoadX509KeyPair(filepath.Join(pki, "ca.crt"), filepath.Join(pki, "ca.key"))
	if err != nil {
		t.Fatalf("cluster CA: %v", err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: user},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
