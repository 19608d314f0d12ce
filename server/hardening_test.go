package server

import (
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTLSSettingsAreParsedAndInsecureOnesRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cfg      Config
		wantMin  uint16
		wantCBC  bool
		wantNone bool // no suites (TLS 1.3)
		wantErr  string
	}{
		{name: "default: TLS 1.2, AEAD suites only", cfg: Config{}, wantMin: tls.VersionTLS12},
		{name: "TLS 1.3", cfg: Config{TLSMinVersion: "VersionTLS13"}, wantMin: tls.VersionTLS13, wantNone: true},
		{name: "a CBC-SHA1 suite named explicitly", cfg: Config{TLSCipherSuites: []string{"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"}},
			wantMin: tls.VersionTLS12, wantCBC: true},
		{name: "TLS 1.1 is refused", cfg: Config{TLSMinVersion: "VersionTLS11"}, wantErr: `tlsMinVersion "VersionTLS11" is refused`},
		{name: "TLS 1.0 is refused", cfg: Config{TLSMinVersion: "VersionTLS10"}, wantErr: `tlsMinVersion "VersionTLS10" is refused`},
		{name: "an unknown version is refused", cfg: Config{TLSMinVersion: "TLS1.3"}, wantErr: `tlsMinVersion "TLS1.3"`},
		{name: "an unknown suite is refused", cfg: Config{TLSCipherSuites: []string{"TLS_AES_512_MAGIC"}}, wantErr: "TLS_AES_512_MAGIC"},
		{name: "RC4 is refused", cfg: Config{TLSCipherSuites: []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_RSA_WITH_RC4_128_SHA"}},
			wantErr: "TLS_RSA_WITH_RC4_128_SHA refused"},
		{name: "3DES is refused", cfg: Config{TLSCipherSuites: []string{"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA"}}, wantErr: "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA refused"},
	}
	for _, tt := range tests {
		min, suites, err := tt.cfg.tlsSettings()
		if verr := tt.cfg.Validate(); (verr == nil) != (err == nil) {
			t.Errorf("%s: Validate() = %v, tlsSettings() = %v: want the same verdict", tt.name, verr, err)
		}
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want one containing %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || min != tt.wantMin {
			t.Errorf("%s: min %x err %v, want %x", tt.name, min, err, tt.wantMin)
			continue
		}
		names := cipherSuiteNames(suites)
		hasCBC := slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "_CBC_") })
		if tt.wantNone != (len(suites) == 0) || hasCBC != tt.wantCBC {
			t.Errorf("%s: suites %v, want none %v, CBC %v", tt.name, names, tt.wantNone, tt.wantCBC)
		}
	}
}

// handshake connects to addr offering only suite at TLS 1.2 at most, or
// only version.
func handshake(addr string, version uint16, suite uint16) error {
	cfg := &tls.Config{InsecureSkipVerify: true, MaxVersion: version} //nolint:gosec // the test checks the handshake only
	if suite != 0 {
		cfg.CipherSuites = []uint16{suite}
	}
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return err
	}
	return c.Close()
}

func TestSecurePortRefusesWeakTLS(t *testing.T) {
	api := &fakeAPI{allow: func(string, string) bool { return false }}
	dir := t.TempDir()
	url := startSecure(t, Config{SecurePort: 1, NodeName: "node-1", CertDir: dir}, SecureDeps{Pods: podsFixed{}, Client: api.client(t)})
	addr := strings.TrimPrefix(url, "https://")
	if err := handshake(addr, tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256); err != nil {
		t.Errorf("TLS 1.2 with ECDHE AES-GCM: %v, want a handshake", err)
	}
	for _, suite := range []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA, tls.TLS_RSA_WITH_AES_128_GCM_SHA256} {
		if err := handshake(addr, tls.VersionTLS12, suite); err == nil {
			t.Errorf("TLS 1.2 with %s: a handshake, want a refusal", tls.CipherSuiteName(suite))
		}
	}
	if err := handshake(addr, tls.VersionTLS11, 0); err == nil {
		t.Errorf("TLS 1.1: a handshake, want a refusal")
	}

	tls13 := startSecure(t, Config{SecurePort: 1, NodeName: "node-1", CertDir: dir, TLSMinVersion: "VersionTLS13"},
		SecureDeps{Pods: podsFixed{}, Client: api.client(t)})
	if err := handshake(strings.TrimPrefix(tls13, "https://"), tls.VersionTLS12, 0); err == nil {
		t.Errorf("TLS 1.2 against tlsMinVersion VersionTLS13: a handshake, want a refusal")
	}
	if err := handshake(strings.TrimPrefix(tls13, "https://"), tls.VersionTLS13, 0); err != nil {
		t.Errorf("TLS 1.3: %v", err)
	}
}

// TestPortValidationMatrix follows the kubelet's port checks: each port
// is 0 (off) to 65535, and the two ports differ. nodekit has no healthz
// port of its own (/healthz is on both ports).
func TestPortValidationMatrix(t *testing.T) {
	t.Parallel()
	for _, field := range []string{"port", "securePort"} {
		for _, tc := range []struct {
			v       int
			wantErr bool
		}{{0, false}, {1, false}, {10250, false}, {65535, false}, {-1, true}, {-65535, true}, {65536, true}, {1 << 20, true}} {
			cfg := Config{}
			if field == "port" {
				cfg.Port = tc.v
			} else {
				cfg.SecurePort = tc.v
			}
			err := cfg.Validate()
			if tc.wantErr != (err != nil) || (err != nil && !strings.Contains(err.Error(), fmt.Sprintf("server %s %d", field, tc.v))) {
				t.Errorf("%s %d: Validate() = %v, want error %v naming it", field, tc.v, err, tc.wantErr)
			}
		}
	}
	for _, tc := range []struct {
		port, secure int
		wantErr      bool
	}{{10255, 10250, false}, {10250, 10250, true}, {0, 0, false}, {0, 10250, false}, {10250, 0, false}, {65535, 65535, true}} {
		err := Config{Port: tc.port, SecurePort: tc.secure}.Validate()
		if tc.wantErr != (err != nil) {
			t.Errorf("port %d securePort %d: Validate() = %v, want error %v", tc.port, tc.secure, err, tc.wantErr)
		}
	}
}

// TestClientCertificatesNeedClientCAFile: as the kubelet, without
// clientCAFile a client certificate authenticates no one, even one the
// kubeconfig's cluster CA signed.
func TestClientCertificatesNeedClientCAFile(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", certificate-authority-data: %s}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
users: [{name: u, user: {token: t}}]
`, base64.StdEncoding.EncodeToString(ca.pem))
	if err := os.WriteFile(kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	api := &fakeAPI{allow: func(user, _ string) bool { return user == "kube-apiserver-kubelet-client" }}
	cert := ca.clientCert(t, "kube-apiserver-kubelet-client", "system:masters")
	pods := podsFixed{{ObjectMeta: metav1.ObjectMeta{Name: "web"}}}

	without := startSecure(t, Config{SecurePort: 1, NodeName: "node-1", CertDir: filepath.Join(dir, "a"), Kubeconfig: kubeconfig},
		SecureDeps{Pods: pods, Client: api.client(t)})
	if code, body := request(t, without+"/pods", "", &cert); code != http.StatusUnauthorized {
		t.Errorf("a certificate of the cluster CA without clientCAFile: %d %q, want 401", code, body)
	}
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	with := startSecure(t, Config{SecurePort: 1, NodeName: "node-1", CertDir: filepath.Join(dir, "b"), ClientCAFile: caFile},
		SecureDeps{Pods: pods, Client: api.client(t)})
	if code, body := request(t, with+"/pods", "", &cert); code != http.StatusOK {
		t.Errorf("the same certificate with clientCAFile: %d %q, want 200", code, body)
	}
}
