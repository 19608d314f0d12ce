package server

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "the zero value is valid", cfg: Config{}},
		{name: "the kubelet's read-only port on loopback is valid", cfg: Config{Address: "127.0.0.1", Port: DefaultPort}},
		{name: "the highest port is valid", cfg: Config{Port: 65535}},
		{name: "an IPv6 address is valid", cfg: Config{Address: "::1", Port: 1}},
		{name: "all interfaces are valid for the secure port", cfg: Config{Address: "0.0.0.0", SecurePort: 1}},
		{name: "all interfaces are valid for the read-only port when allowed explicitly", cfg: Config{Address: "0.0.0.0", Port: 1, UnauthenticatedReadOnlyPortOnAnyAddress: true}},
		{name: "all interfaces are refused for the unauthenticated read-only port", cfg: Config{Address: "0.0.0.0", Port: 1},
			wantErr: "--unauthenticated-read-only-port-on-any-address"},
		{name: "a host name is refused for the read-only port", cfg: Config{Address: "node-1.example.com", Port: 1}, wantErr: "not a loopback address"},
		{name: "localhost is valid for the read-only port", cfg: Config{Address: "localhost", Port: 1}},
		{name: "a host name is valid for the secure port", cfg: Config{Address: "node-1.example.com", SecurePort: 1}},
		{name: "the two ports must differ", cfg: Config{Port: 10250, SecurePort: 10250}, wantErr: "they must differ"},
		{name: "a secure port above 65535 is invalid", cfg: Config{SecurePort: 65536}, wantErr: "server securePort 65536"},
		{name: "a certificate without its key is invalid", cfg: Config{TLSCertFile: "/c.crt"}, wantErr: "set both or neither"},
		{name: "a fixed certificate and rotation are exclusive", cfg: Config{TLSCertFile: "/c.crt", TLSPrivateKeyFile: "/c.key", RotateServerCertificates: true}, wantErr: "choose one"},
		{name: "a negative idle timeout is invalid", cfg: Config{IdleTimeout: -time.Second}, wantErr: "server idleTimeout -1s"},
		{name: "a negative port is invalid", cfg: Config{Port: -1}, wantErr: "server port -1"},
		{name: "a port above 65535 is invalid", cfg: Config{Port: 65536}, wantErr: "server port 65536"},
		{name: "an address with a port is invalid", cfg: Config{Address: "127.0.0.1:80"}, wantErr: `server address "127.0.0.1:80"`},
		{name: "a bracketed IPv6 address is invalid", cfg: Config{Address: "[::1]"}, wantErr: `server address "[::1]"`},
		{name: "a host name with spaces is invalid", cfg: Config{Address: "my node"}, wantErr: `server address "my node"`},
		{name: "a negative header timeout is invalid", cfg: Config{ReadHeaderTimeout: -time.Second}, wantErr: "server readHeaderTimeout -1s"},
		{name: "a negative shutdown timeout is invalid", cfg: Config{ShutdownTimeout: -time.Second}, wantErr: "server shutdownTimeout -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	got := Config{}.withDefaults()
	want := Config{Address: "127.0.0.1", SecureAddress: "0.0.0.0", Port: 0, ReadHeaderTimeout: 10 * time.Second, ShutdownTimeout: 5 * time.Second,
		IdleTimeout: 90 * time.Second, ReadTimeout: 4 * time.Hour, WriteTimeout: 4 * time.Hour,
		AuthenticationCacheTTL: 2 * time.Minute, AuthorizationAllowedCacheTTL: 5 * time.Minute, AuthorizationDeniedCacheTTL: 30 * time.Second,
		StreamingConnectionIdleTimeout: 4 * time.Hour, SystemLogDir: "/var/log"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Config{}.withDefaults() = %+v, want %+v", got, want)
	}
	if d := (Config{RootDir: "/var/lib/nodekit"}).withDefaults().CertDir; d != "/var/lib/nodekit/pki" {
		t.Errorf("CertDir defaults to %q, want RootDir/pki", d)
	}
	if !got.Disabled() {
		t.Errorf("the zero value with defaults is not disabled; Port 0 must stay off")
	}
	set := Config{Address: "::1", SecureAddress: "10.0.0.1", Port: 8080, ReadHeaderTimeout: time.Second, ShutdownTimeout: time.Second,
		IdleTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second, AuthenticationCacheTTL: time.Second,
		AuthorizationAllowedCacheTTL: time.Second, AuthorizationDeniedCacheTTL: time.Second, CertDir: "/pki",
		StreamingConnectionIdleTimeout: time.Second, SystemLogDir: "/logs"}
	if got := set.withDefaults(); !reflect.DeepEqual(got, set) {
		t.Errorf("withDefaults changed set fields: %+v, want %+v", got, set)
	}
	if set.Disabled() {
		t.Errorf("Config{Port: 8080}.Disabled() = true, want false")
	}
}
