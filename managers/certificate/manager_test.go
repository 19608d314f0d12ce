package certificate

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/certificate"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestStepDecidesWhenToCloseConnectionsAndWhenToGiveUp(t *testing.T) {
	a, b := &tls.Certificate{}, &tls.Certificate{}
	t0 := time.Now()
	type check struct {
		after   time.Duration
		cur     *tls.Certificate
		healthy bool
		close   bool
		fail    bool
	}
	tests := []struct {
		name   string
		checks []check
	}{
		{name: "the same certificate keeps the connections", checks: []check{{after: 10 * time.Second, cur: a}, {after: 20 * time.Second, cur: a}}},
		{name: "a new certificate closes them once", checks: []check{{after: 10 * time.Second, cur: b, close: true}, {after: 20 * time.Second, cur: b}}},
		{name: "no certificate for less than exitAfter is waited out", checks: []check{{after: 4 * time.Minute, healthy: true}}},
		{name: "no certificate for exitAfter with the API server answering fails", checks: []check{{after: 10 * time.Second, cur: a}, {after: 5*time.Minute + 10*time.Second, healthy: true, fail: true}}},
		{name: "no certificate with the API server silent only warns", checks: []check{{after: 6 * time.Minute}, {after: 7 * time.Minute}}},
		{name: "a certificate coming back resets the wait", checks: []check{{after: 4 * time.Minute, healthy: true}, {after: 4*time.Minute + 10*time.Second, cur: b, close: true}, {after: 9 * time.Minute, healthy: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Manager{log: logr.Discard(), cfg: Config{}.withDefaults()}
			st := watchState{last: a, lastValid: t0}
			for i, c := range tt.checks {
				closeConns, err := m.step(&st, t0.Add(c.after), c.cur, c.healthy)
				if closeConns != c.close || (err != nil) != c.fail || err != nil && !errors.Is(err, ErrNoClientCertificate) {
					t.Errorf("check %d at +%s: close %v err %v, want close %v fail %v", i, c.after, closeConns, err, c.close, c.fail)
				}
			}
		})
	}
}

func TestNewManagerHasNothingToRotateWithATokenKubeconfig(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.BootstrapKubeconfig = ""
	_, err := NewManager(&rest.Config{Host: "https://127.0.0.1:1", BearerToken: "t"}, clocktesting.NewFakeClock(time.Now()), prometheus.NewRegistry(), logr.Discard(), cfg)
	if !errors.Is(err, ErrNothingToRotate) {
		t.Errorf("NewManager = %v, want ErrNothingToRotate", err)
	}
}

// TestManagerRenewsAnAgingCertificateAndTheClientsPresentTheNewOne runs
// client-go's certificate manager on a certificate past 90 % of its
// lifetime: it requests a new one at once; on the next check the
// connections close and the same client handshakes with the new one.
func TestManagerRenewsAnAgingCertificateAndTheClientsPresentTheNewOne(t *testing.T) {
	ca := newTestCA(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "no client certificate", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, r.TLS.PeerCertificates[0].SerialNumber.String())
	}))
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	srvCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	cfg := testConfig(t.TempDir())
	cfg.BootstrapKubeconfig = ""
	cfg.RotateCertificates = true
	now := time.Now()
	certPEM, keyPEM := ca.keyPair(t, clientSubject("edge-1"), now.Add(-95*time.Minute), now.Add(5*time.Minute))
	seed, err := certificate.NewFileStore(PairPrefix, cfg.CertDir, cfg.CertDir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seed.Update(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	pemPath := seed.CurrentPath()
	rc := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: srvCA, CertFile: pemPath, KeyFile: pemPath}}
	clk := clocktesting.NewFakeClock(now)
	m, err := NewManager(rc, clk, prometheus.NewRegistry(), testr.NewWithOptions(t, testr.Options{Verbosity: 4}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	signer, created := signingClient(t, ca, time.Hour)
	m.clients = func(*tls.Certificate) (kubernetes.Interface, error) { return signer, nil }
	closed := make(chan struct{}, 10)
	closeAll := m.closeAll
	m.closeAll = func() { closeAll(); closed <- struct{}{} }

	client, err := kubernetes.NewForConfig(m.RESTConfig(rc))
	if err != nil {
		t.Fatal(err)
	}
	serial := func() string {
		b, err := client.Discovery().RESTClient().Get().AbsPath("/serial").DoRaw(context.Background())
		if err != nil {
			t.Fatalf("request through the manager's transport: %v", err)
		}
		return string(b)
	}
	old := m.Current()
	if got := serial(); got != old.Leaf.SerialNumber.String() {
		t.Fatalf("the server saw certificate %s, want the current one %s", got, old.Leaf.SerialNumber)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return m.Current() != old, nil
	}); err != nil {
		t.Fatalf("the certificate was not renewed: %v", err)
	}
	renewed := m.Current()
	if len(*created) != 1 || (*created)[0].Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		t.Fatalf("renewal CSRs %v, want one for the kubelet client signer", *created)
	}
	onDisk, err := certificate.NewFileStore(PairPrefix, cfg.CertDir, cfg.CertDir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := onDisk.Current(); err != nil || c.Leaf.SerialNumber.Cmp(renewed.Leaf.SerialNumber) != 0 {
		t.Errorf("kubelet-client-current.pem does not hold the renewed certificate (%v)", err)
	}
	for !clk.HasWaiters() {
		<-time.After(time.Millisecond)
	}
	clk.Step(cfg.withDefaults().CheckPeriod)
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("the connections were not closed after the renewal")
	}
	if got := serial(); got != renewed.Leaf.SerialNumber.String() {
		t.Errorf("after the renewal the server saw certificate %s, want %s", got, renewed.Leaf.SerialNumber)
	}
	if kc, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig); err == nil {
		t.Errorf("the manager wrote a kubeconfig (%s): only the bootstrap does", kc.Host)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v after ctx ended, want nil", err)
	}
}
