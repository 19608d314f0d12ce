package nodekit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/managers/certificate"
)

func TestKubeCredentialsLeaveRotationOffWithoutAClientCertificate(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	const tokenKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: "t"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(kubeconfig, []byte(tokenKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	log := funcr.New(func(prefix, args string) { logs.WriteString(prefix + " " + args + "\n") }, funcr.Options{})
	clk := clocktesting.NewFakeClock(time.Now())
	tests := []struct {
		name     string
		cfg      Config
		wantRC   bool
		wantLogs string
	}{
		{name: "no kubeconfig: no client and no credentials", cfg: Config{NodeName: "n", RootDir: dir}},
		{name: "a token kubeconfig with rotation on keeps its token", cfg: Config{NodeName: "n", RootDir: dir, Kubeconfig: kubeconfig,
			Certificates: certificate.Config{RotateCertificates: true}}, wantRC: true, wantLogs: "rotation is off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := tt.cfg.Complete()
			if err != nil {
				t.Fatal(err)
			}
			creds, err := kubeCredentials(cfg, clk, prometheus.NewRegistry(), log)
			if err != nil {
				t.Fatal(err)
			}
			if (creds.rc != nil) != tt.wantRC || creds.certs != nil {
				t.Errorf("credentials %+v, want a rest config %v and no certificate manager", creds, tt.wantRC)
			}
			if tt.wantRC && creds.rc.BearerToken != "t" {
				t.Errorf("the token was dropped")
			}
			if !strings.Contains(logs.String(), tt.wantLogs) {
				t.Errorf("logs %q, want %q", logs.String(), tt.wantLogs)
			}
		})
	}
}
