package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func parse(t *testing.T, file string, args ...string) (*options, error) {
	t.Helper()
	o := &options{}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	o.addFlags(fs)
	if file != "" {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--config", path)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return o, applyConfigFile(fs, o.configFile)
}

func TestConfigFileFieldsAreFlagNamesInCamelCase(t *testing.T) {
	o, err := parse(t, "runtimeEndpoint: unix:///run/x.sock\nnodeName: Edge-1\nport: 0\nmaxPods: 20\nfileCheckFrequency: 5s\n")
	if err != nil {
		t.Fatal(err)
	}
	cfg := o.config()
	if cfg.RuntimeEndpoint != "unix:///run/x.sock" || cfg.NodeName != "edge-1" || cfg.Server.Port != 0 ||
		cfg.Agent.MaxPods != 20 || cfg.FileCheckPeriod.String() != "5s" {
		t.Fatalf("config from file not applied: %+v", cfg)
	}
}

func TestFlagsOverrideTheConfigFile(t *testing.T) {
	o, err := parse(t, "runtimeEndpoint: unix:///from-file.sock\nport: 9999\n", "--runtime-endpoint", "unix:///from-flag.sock")
	if err != nil {
		t.Fatal(err)
	}
	if o.runtimeEndpoint != "unix:///from-flag.sock" || o.port.v != 9999 {
		t.Fatalf("endpoint %q port %v: want the flag's endpoint and the file's port", o.runtimeEndpoint, o.port)
	}
}

func TestUnknownConfigFieldIsAnErrorNamingIt(t *testing.T) {
	_, err := parse(t, "runtimeEndpont: unix:///typo.sock\n")
	if err == nil || !strings.Contains(err.Error(), `"runtimeEndpont"`) {
		t.Fatalf("err = %v, want one naming the unknown field", err)
	}
}

func TestDefaultsAreTheKubeletLike(t *testing.T) {
	o, err := parse(t, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := o.config()
	if cfg.RootDir != "/var/lib/nodekit" || cfg.Server.Port != 10255 || cfg.Server.Address != "127.0.0.1" || cfg.Agent.MaxPods != 110 {
		t.Fatalf("defaults: %+v", cfg)
	}
}

func TestCamelCase(t *testing.T) {
	for in, want := range map[string]string{"runtime-endpoint": "runtimeEndpoint", "port": "port", "node-ip": "nodeIp", "file-check-frequency": "fileCheckFrequency"} {
		if got := camelCase(in); got != want {
			t.Errorf("camelCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAllowedUnsafeSysctlsFromFlagAndFileList(t *testing.T) {
	o, err := parse(t, "allowedUnsafeSysctls:\n- kernel.msg*\n- net.core.somaxconn\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := o.config().Agent.AllowedUnsafeSysctls; len(got) != 2 || got[0] != "kernel.msg*" || got[1] != "net.core.somaxconn" {
		t.Fatalf("allowedUnsafeSysctls from file = %q", got)
	}
	o, err = parse(t, "", "--allowed-unsafe-sysctls", "net.*")
	if err != nil {
		t.Fatal(err)
	}
	if got := o.config().Agent.AllowedUnsafeSysctls; len(got) != 1 || got[0] != "net.*" {
		t.Fatalf("allowedUnsafeSysctls from flag = %q", got)
	}
}
