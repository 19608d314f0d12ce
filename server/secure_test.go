package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// testCA is a CA that signs client certificates.
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
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// clientCert returns a client certificate for cn in groups, signed by ca.
func (ca *testCA) clientCert(t *testing.T, cn string, groups ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn, Organization: groups},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// fakeAPI answers TokenReviews from a token table and SubjectAccessReviews
// from an allow function, and records the reviews.
type fakeAPI struct {
	mu     sync.Mutex
	tokens map[string]string // token -> user
	allow  func(user, subresource string) bool
	sars   []authorizationv1.SubjectAccessReviewSpec
}

// client serves the two review APIs over HTTP (the authorizer posts
// through the REST client, which a fake clientset lacks) and returns a
// clientset for them.
func (f *fakeAPI) client(t *testing.T) kubernetes.Interface {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /apis/authentication.k8s.io/v1/tokenreviews", func(w http.ResponseWriter, r *http.Request) {
		var tr authenticationv1.TokenReview
		if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if u, ok := f.tokens[tr.Spec.Token]; ok {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: u}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&tr)
	})
	mux.HandleFunc("POST /apis/authorization.k8s.io/v1/subjectaccessreviews", func(w http.ResponseWriter, r *http.Request) {
		var sar authorizationv1.SubjectAccessReview
		if err := json.NewDecoder(r.Body).Decode(&sar); err != nil || sar.Spec.ResourceAttributes == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.sars = append(f.sars, sar.Spec)
		f.mu.Unlock()
		sar.Status.Allowed = f.allow(sar.Spec.User, sar.Spec.ResourceAttributes.Subresource)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&sar)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	c, err := kubernetes.NewForConfig(&rest.Config{Host: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fakeAPI) reviews() []authorizationv1.SubjectAccessReviewSpec {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]authorizationv1.SubjectAccessReviewSpec(nil), f.sars...)
}

// startSecure serves a SecureServer on 127.0.0.1:0 and returns its URL.
func startSecure(t *testing.T, cfg Config, deps SecureDeps) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewSecure(deps, logr.Discard(), cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "https://" + l.Addr().String()
}

func request(t *testing.T, url, token string, cert *tls.Certificate) (int, string) {
	t.Helper()
	tlsCfg := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the test checks the server's certificate separately
	if cert != nil {
		tlsCfg.Certificates = []tls.Certificate{*cert}
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}, Timeout: 30 * time.Second}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestSecureServerAuthenticatesAndAuthorizesLikeTheKubelet(t *testing.T) {
	ca, otherCA := newTestCA(t), newTestCA(t)
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	api := &fakeAPI{
		tokens: map[string]string{"sa-token": "system:serviceaccount:ns:nobody", "admin-token": "kubelet-admin"},
		allow: func(user, sub string) bool {
			return user == "kubelet-admin" || (user == "kube-apiserver-kubelet-client" && sub == "proxy")
		},
	}
	pods := podsFixed{{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}}}
	cfg := Config{SecurePort: 1, NodeName: "node-1", NodeIP: "127.0.0.1", CertDir: filepath.Join(dir, "pki"), ClientCAFile: caFile}
	url := startSecure(t, cfg, SecureDeps{Pods: pods, Client: api.client(t)})

	apiserverCert := ca.clientCert(t, "kube-apiserver-kubelet-client", "system:masters")
	strangerCert := otherCA.clientCert(t, "kube-apiserver-kubelet-client")
	tests := []struct {
		name     string
		token    string
		cert     *tls.Certificate
		wantCode int
		wantBody string
	}{
		{name: "an anonymous client gets 401", wantCode: http.StatusUnauthorized, wantBody: "Unauthorized"},
		{name: "an unknown token gets 401", token: "bogus", wantCode: http.StatusUnauthorized},
		{name: "a certificate from another CA gets 401", cert: &strangerCert, wantCode: http.StatusUnauthorized},
		{name: "a service account without node rights gets 403 naming it", token: "sa-token", wantCode: http.StatusForbidden,
			wantBody: "Forbidden (user=system:serviceaccount:ns:nobody, verb=get, resource=nodes, subresource(s)=[pods proxy])"},
		{name: "a user allowed on the node gets 200", token: "admin-token", wantCode: http.StatusOK, wantBody: `"name":"web"`},
		{name: "the API server's client certificate gets 200 through nodes/proxy", cert: &apiserverCert, wantCode: http.StatusOK, wantBody: `"name":"web"`},
	}
	for _, tt := range tests {
		code, body := request(t, url+"/pods", tt.token, tt.cert)
		if code != tt.wantCode || !strings.Contains(body, tt.wantBody) {
			t.Errorf("%s: got %d %q, want %d with %q", tt.name, code, body, tt.wantCode, tt.wantBody)
		}
	}
	for _, r := range api.reviews() {
		ra := r.ResourceAttributes
		if ra == nil || ra.Resource != "nodes" || ra.Name != "node-1" || ra.Verb != "get" || ra.Version != "v1" {
			t.Errorf("SubjectAccessReview %+v: want get nodes/node-1", r)
		}
	}

	// Decisions are cached: the same requests again ask nothing more.
	before := len(api.reviews())
	request(t, url+"/pods", "sa-token", nil)
	request(t, url+"/pods", "admin-token", nil)
	if after := len(api.reviews()); after != before {
		t.Errorf("repeated requests made %d more SubjectAccessReviews, want 0 (cached)", after-before)
	}

	// The self-signed serving certificate is in CertDir, for the node.
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "pki", "kubelet.crt"), filepath.Join(dir, "pki", "kubelet.key"))
	if err != nil {
		t.Fatalf("self-signed certificate: %v", err)
	}
	leaf, _ := x509.ParseCertificate(pair.Certificate[0])
	if err := leaf.VerifyHostname("node-1"); err != nil {
		t.Errorf("serving certificate: %v", err)
	}
	if err := leaf.VerifyHostname("127.0.0.1"); err != nil {
		t.Errorf("serving certificate: %v", err)
	}
}

func TestSecureServerAnonymousIsAuthorizedWhenEnabled(t *testing.T) {
	api := &fakeAPI{allow: func(user, sub string) bool { return user == "system:anonymous" && sub == "healthz" }}
	cfg := Config{SecurePort: 1, NodeName: "node-1", CertDir: t.TempDir(), AnonymousAuth: true}
	url := startSecure(t, cfg, SecureDeps{Pods: podsFixed{}, Client: api.client(t)})
	if code, body := request(t, url+"/healthz", "", nil); code != http.StatusOK || body != "ok" {
		t.Errorf("anonymous /healthz = %d %q, want 200 ok", code, body)
	}
	if code, _ := request(t, url+"/pods", "", nil); code != http.StatusForbidden {
		t.Errorf("anonymous /pods = %d, want 403", code)
	}
}

func TestSelfSignedCertificateIsMadeOnceAndKept(t *testing.T) {
	t.Parallel()
	cfg := Config{NodeName: "node-1", CertDir: filepath.Join(t.TempDir(), "pki")}
	certFile, _, err := ensureSelfSigned(cfg, nil, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(certFile)
	if _, _, err := ensureSelfSigned(cfg, nil, logr.Discard()); err != nil {
		t.Fatal(err)
	}
	if second, _ := os.ReadFile(certFile); string(first) != string(second) {
		t.Errorf("a second start replaced the self-signed certificate")
	}
}

func TestServingCSRTemplateIsTheNodes(t *testing.T) {
	t.Parallel()
	cfg := Config{NodeName: "node-1", NodeIP: "10.0.0.5"}
	tmpl := servingCSRTemplate(cfg, nodeAddresses(cfg, nil, logr.Discard()))
	if tmpl.Subject.CommonName != "system:node:node-1" || len(tmpl.Subject.Organization) != 1 || tmpl.Subject.Organization[0] != "system:nodes" {
		t.Errorf("subject = %+v", tmpl.Subject)
	}
	if len(tmpl.DNSNames) != 1 || tmpl.DNSNames[0] != "node-1" || len(tmpl.IPAddresses) != 1 || tmpl.IPAddresses[0].String() != "10.0.0.5" {
		t.Errorf("names = %v %v", tmpl.DNSNames, tmpl.IPAddresses)
	}
}

func TestSecureServerIsOffWithoutAClient(t *testing.T) {
	t.Parallel()
	s := NewSecure(SecureDeps{Pods: podsFixed{}}, logr.Discard(), Config{SecurePort: 1})
	if err := s.Run(context.Background()); err != nil {
		t.Fatalf("Run() = %v, want nil (off)", err)
	}
	if s.Addr() != nil {
		t.Errorf("Addr() = %v, want nil", s.Addr())
	}
}

// podsFixed is a PodLister over a fixed slice.
type podsFixed []*corev1.Pod

func (p podsFixed) GetPods() []*corev1.Pod { return p }
