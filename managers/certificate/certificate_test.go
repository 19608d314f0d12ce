package certificate

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	on := Config{NodeName: "n", Kubeconfig: "/k", CertDir: "/pki", RotateCertificates: true}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "the zero value is valid", cfg: Config{}},
		{name: "rotation with everything set is valid", cfg: on},
		{name: "bootstrap needs a kubeconfig to write", cfg: Config{NodeName: "n", CertDir: "/pki", BootstrapKubeconfig: "/b"}, want: "needs kubeconfig"},
		{name: "rotation without a kubeconfig is a standalone node's no-op", cfg: Config{NodeName: "n", CertDir: "/pki", RotateCertificates: true}},
		{name: "rotation needs a cert dir", cfg: Config{NodeName: "n", Kubeconfig: "/k", RotateCertificates: true}, want: "certDir is required"},
		{name: "rotation needs the node name", cfg: Config{Kubeconfig: "/k", CertDir: "/pki", RotateCertificates: true}, want: "nodeName is required"},
		{name: "the bootstrap kubeconfig cannot be the kubeconfig", cfg: Config{NodeName: "n", Kubeconfig: "/k", CertDir: "/pki", BootstrapKubeconfig: "/k"}, want: "the same file"},
		{name: "a negative duration is refused", cfg: Config{ExitAfter: -time.Second}, want: "exitAfter -1s must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestKubeconfigValidNeedsAReadableUnexpiredClientCertificate(t *testing.T) {
	ca := newTestCA(t)
	now := time.Now()
	dir := t.TempDir()
	good, goodKey := ca.keyPair(t, clientSubject("n"), now.Add(-time.Hour), now.Add(time.Hour))
	_, otherKey := ca.keyPair(t, clientSubject("n"), now.Add(-time.Hour), now.Add(time.Hour))
	tests := []struct {
		name     string
		write    func(path string)
		at       time.Time
		wantFail string
	}{
		{name: "a kubeconfig with a valid pair is valid", write: func(p string) { writeCertKubeconfig(t, p, ca, good, goodKey) }, at: now},
		{name: "a missing kubeconfig is not", write: func(string) {}, at: now, wantFail: "no such file"},
		{name: "a token kubeconfig has no client certificate", write: func(p string) { writeCertKubeconfig(t, p, ca, nil, nil) }, at: now, wantFail: "no client certificate"},
		{name: "a certificate past its NotAfter has expired", write: func(p string) { writeCertKubeconfig(t, p, ca, good, goodKey) }, at: now.Add(2 * time.Hour), wantFail: "expired"},
		{name: "a certificate with another key is not valid", write: func(p string) { writeCertKubeconfig(t, p, ca, good, otherKey) }, at: now, wantFail: "certificate and key"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.Repeat("k", i+1))
			tt.write(path)
			err := kubeconfigValid(path, tt.at)
			if tt.wantFail == "" && err != nil || tt.wantFail != "" && (err == nil || !strings.Contains(err.Error(), tt.wantFail)) {
				t.Errorf("kubeconfigValid = %v, want %q", err, tt.wantFail)
			}
		})
	}
}
