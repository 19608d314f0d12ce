package main

import (
	"testing"
)

func TestCertificateFlagsSetTheAgentsClientCredentials(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		args      []string
		bootstrap string
		rotate    bool
		certDir   string
	}{
		{name: "both are off by default, as the kubelet's flags", certDir: "/var/lib/nodekit/pki"},
		{name: "the kubelet's flags turn them on", args: []string{"--kubeconfig", "/k", "--bootstrap-kubeconfig", "/b", "--rotate-certificates", "--root-dir", "/r"}, bootstrap: "/b", rotate: true, certDir: "/r/pki"},
		{name: "the config file names them in camelCase", file: "kubeconfig: /k\nbootstrapKubeconfig: /b\nrotateCertificates: true\n", bootstrap: "/b", rotate: true, certDir: "/var/lib/nodekit/pki"},
		{name: "--cert-dir is shared with the serving certificates", args: []string{"--cert-dir", "/c"}, certDir: "/c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parse(t, tt.file, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := o.config().Complete()
			if err != nil {
				t.Fatal(err)
			}
			c := cfg.Certificates
			if c.BootstrapKubeconfig != tt.bootstrap || c.RotateCertificates != tt.rotate || c.CertDir != tt.certDir {
				t.Errorf("certificates = %+v, want bootstrap %q rotate %v certDir %q", c, tt.bootstrap, tt.rotate, tt.certDir)
			}
		})
	}
}
