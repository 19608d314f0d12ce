package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestReadOnlyPortIsOffWhenJoiningAClusterUnlessAskedFor(t *testing.T) {
	tests := []struct {
		name string
		file string
		args []string
		want int
	}{
		{name: "standalone keeps the read-only port", want: 10255},
		{name: "joining a cluster turns it off", args: []string{"--kubeconfig", "/k"}, want: 0},
		{name: "joining a cluster with --read-only-port keeps it", args: []string{"--kubeconfig", "/k", "--read-only-port", "10255"}, want: 10255},
		{name: "the deprecated --port still works", args: []string{"--kubeconfig", "/k", "--port", "10266"}, want: 10266},
		{name: "--read-only-port wins over --port", args: []string{"--port", "1", "--read-only-port", "2"}, want: 2},
		{name: "readOnlyPort in the config file counts as asked for", file: "kubeconfig: /k\nreadOnlyPort: 10255\n", want: 10255},
		{name: "standalone with the port turned off", args: []string{"--read-only-port", "0"}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parse(t, tt.file, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := o.config().Server.Port; got != tt.want {
				t.Errorf("read-only port = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestPortFlagWarnsNamingReadOnlyPort(t *testing.T) {
	var out bytes.Buffer
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(&out)
	(&options{}).addFlags(fs)
	if err := fs.Parse([]string{"--port", "10255"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "--port has been deprecated") || !strings.Contains(out.String(), "--read-only-port") {
		t.Errorf("warning = %q, want one naming --read-only-port", out.String())
	}
}

func TestServerFlagsReachTheConfig(t *testing.T) {
	o, err := parse(t, "", "--secure-port", "10260", "--tls-cert-file", "/c", "--tls-private-key-file", "/k", "--client-ca-file", "/ca",
		"--anonymous-auth", "--healthz-include-runtime", "--address", "0.0.0.0", "--unauthenticated-read-only-port-on-any-address")
	if err != nil {
		t.Fatal(err)
	}
	s := o.config().Server
	if s.SecurePort != 10260 || s.TLSCertFile != "/c" || s.TLSPrivateKeyFile != "/k" || s.ClientCAFile != "/ca" || !s.AnonymousAuth ||
		!s.HealthzIncludeRuntime || !s.UnauthenticatedReadOnlyPortOnAnyAddress || s.Address != "0.0.0.0" {
		t.Errorf("server config = %+v", s)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
	o, _ = parse(t, "", "--address", "0.0.0.0")
	if err := o.config().Server.Validate(); err == nil || !strings.Contains(err.Error(), "--unauthenticated-read-only-port-on-any-address") {
		t.Errorf("0.0.0.0 with the read-only port: Validate() = %v, want a refusal naming the flag", err)
	}
}
