package server

import (
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
		{name: "all interfaces are valid", cfg: Config{Address: "0.0.0.0", Port: 1}},
		{name: "a host name is valid", cfg: Config{Address: "node-1.example.com", Port: 1}},
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
	want := Config{Address: "127.0.0.1", Port: 0, ReadHeaderTimeout: 10 * time.Second, ShutdownTimeout: 5 * time.Second}
	if got != want {
		t.Errorf("Config{}.withDefaults() = %+v, want %+v", got, want)
	}
	if !got.Disabled() {
		t.Errorf("the zero value with defaults is not disabled; Port 0 must stay off")
	}
	set := Config{Address: "::1", Port: 8080, ReadHeaderTimeout: time.Second, ShutdownTimeout: time.Second}
	if got := set.withDefaults(); got != set {
		t.Errorf("withDefaults changed set fields: %+v, want %+v", got, set)
	}
	if set.Disabled() {
		t.Errorf("Config{Port: 8080}.Disabled() = true, want false")
	}
}
