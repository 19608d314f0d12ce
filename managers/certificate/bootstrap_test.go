package certificate

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clocktesting "k8s.io/utils/clock/testing"
)

func testConfig(dir string) Config {
	return Config{NodeName: "edge-1", Kubeconfig: filepath.Join(dir, "kubeconfig"), CertDir: filepath.Join(dir, "pki"),
		BootstrapKubeconfig: filepath.Join(dir, "bootstrap-kubeconfig")}
}

func TestBootstrapRequestsTheNodeClientCertificateAndWritesTheKubeconfig(t *testing.T) {
	ca := newTestCA(t)
	client, created := signingClient(t, ca, time.Hour)
	cfg := testConfig(t.TempDir())
	bootRC := &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{CAData: ca.pem}}
	clk := clocktesting.NewFakeClock(time.Now())
	if err := bootstrapWith(context.Background(), clk, logr.Discard(), client, bootRC, cfg); err != nil {
		t.Fatal(err)
	}
	if len(*created) != 1 {
		t.Fatalf("%d CSRs, want 1", len(*created))
	}
	csr := (*created)[0]
	if !strings.HasPrefix(csr.Name, "node-csr-") || csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		t.Errorf("CSR %s signer %s", csr.Name, csr.Spec.SignerName)
	}
	if want := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}; !slices.Equal(csr.Spec.Usages, want) {
		t.Errorf("usages %v, want %v (an ECDSA key: no key encipherment)", csr.Spec.Usages, want)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil || req.Subject.CommonName != "system:node:edge-1" || !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("request subject %v (%v), want CN=system:node:edge-1, O=system:nodes", req.Subject, err)
	}
	current := filepath.Join(cfg.CertDir, "kubelet-client-current.pem")
	target, err := os.Readlink(current)
	if err != nil || !strings.HasPrefix(filepath.Base(target), "kubelet-client-2") {
		t.Errorf("kubelet-client-current.pem -> %q (%v), want kubelet-client-DATE.pem", target, err)
	}
	if _, err := os.Stat(filepath.Join(cfg.CertDir, tmpKeyFile)); !os.IsNotExist(err) {
		t.Errorf("the bootstrap key was left in place: %v", err)
	}
	if err := kubeconfigValid(cfg.Kubeconfig, clk.Now()); err != nil {
		t.Fatalf("the written kubeconfig: %v", err)
	}
	rc, _ := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
	if rc.Host != bootRC.Host || string(rc.CAData) != string(ca.pem) || rc.CertFile != current || rc.KeyFile != current || rc.BearerToken != "" {
		t.Errorf("kubeconfig host %s cert %s key %s token %q, want the bootstrap server and CA with %s", rc.Host, rc.CertFile, rc.KeyFile, rc.BearerToken, current)
	}
}

func TestBootstrapDoesNothingWithAValidKubeconfig(t *testing.T) {
	ca := newTestCA(t)
	cfg := testConfig(t.TempDir())
	certPEM, keyPEM := ca.keyPair(t, clientSubject("edge-1"), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	writeCertKubeconfig(t, cfg.Kubeconfig, ca, certPEM, keyPEM)
	// The bootstrap kubeconfig does not exist: reading it would fail.
	if err := Bootstrap(context.Background(), clocktesting.NewFakeClock(time.Now()), logr.Discard(), cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cfg.CertDir); !os.IsNotExist(err) {
		t.Errorf("the bootstrap touched the cert dir: %v", err)
	}
}

func TestBootstrapOfAnExpiredKubeconfigFailsOnAMissingBootstrapKubeconfig(t *testing.T) {
	ca := newTestCA(t)
	cfg := testConfig(t.TempDir())
	certPEM, keyPEM := ca.keyPair(t, clientSubject("edge-1"), time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour))
	writeCertKubeconfig(t, cfg.Kubeconfig, ca, certPEM, keyPEM)
	err := Bootstrap(context.Background(), clocktesting.NewFakeClock(time.Now()), logr.Discard(), cfg)
	if err == nil || !strings.Contains(err.Error(), "bootstrap kubeconfig") {
		t.Errorf("Bootstrap = %v, want an error about the bootstrap kubeconfig", err)
	}
}

func TestBootstrapRetriesTheCSRWithTheSameNameAndKey(t *testing.T) {
	ca := newTestCA(t)
	client, created := signingClient(t, ca, time.Hour)
	var names []string
	failures := 1
	client.PrependReactor("create", "certificatesigningrequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		names = append(names, a.(k8stesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest).Name)
		if failures > 0 {
			failures--
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	cfg := testConfig(t.TempDir())
	clk := clocktesting.NewFakeClock(time.Now())
	done := make(chan error, 1)
	go func() {
		done <- bootstrapWith(context.Background(), clk, logr.Discard(), client, &rest.Config{Host: "https://127.0.0.1:6443"}, cfg)
	}()
	// The first create fails; the bootstrap waits retryPeriod on the fake
	// clock before it asks again.
	for !clk.HasWaiters() {
		select {
		case err := <-done:
			t.Fatalf("bootstrap ended before its retry: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	clk.Step(retryPeriod)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(names) != 2 || names[0] != names[1] || len(*created) != 1 {
		t.Errorf("create attempts %v (%d signed), want the same name twice and one CSR", names, len(*created))
	}
}

func TestBootstrapKeyIsKeptUntilTheCertificateComes(t *testing.T) {
	dir := t.TempDir()
	store := emptyStore{}
	first, err := bootstrapKey(store, dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	again, err := bootstrapKey(store, dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != string(again) {
		t.Errorf("a second bootstrap made a new key: a restart would ask with a new CSR")
	}
}
