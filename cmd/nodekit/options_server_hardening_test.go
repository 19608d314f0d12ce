package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2/textlogger"

	"github.com/nodekit/nodekit"
)

func init() {
	fieldCases = append(fieldCases, hardeningFieldCases...)
}

// hardeningFieldCases are the fieldCases of hardeningFields.
var hardeningFieldCases = []struct {
	field string
	yaml  string
	got   func(c nodekit.Config) any
	want  any
}{
	{"tlsMinVersion", "tlsMinVersion: VersionTLS13\n", func(c nodekit.Config) any { return c.Server.TLSMinVersion }, "VersionTLS13"},
	{"tlsCipherSuites", "tlsCipherSuites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384]\n",
		func(c nodekit.Config) any { return strings.Join(c.Server.TLSCipherSuites, ",") },
		"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"},
	{"streamingConnectionIdleTimeout", "streamingConnectionIdleTimeout: 5m\n", func(c nodekit.Config) any { return c.Server.StreamingConnectionIdleTimeout }, 5 * time.Minute},
	{"protectKernelDefaults", "protectKernelDefaults: true\nmaxPods: 53\n", func(c nodekit.Config) any { return c.Agent.MaxPods }, 53},
	{"enableProfilingHandler", "enableProfilingHandler: false\n", func(c nodekit.Config) any { return *c.Server.EnableProfilingHandler }, false},
	{"enableSystemLogHandler", "enableSystemLogHandler: false\n", func(c nodekit.Config) any { return *c.Server.EnableSystemLogHandler }, false},
	{"enableDebugFlagsHandler", "enableDebugFlagsHandler: false\n", func(c nodekit.Config) any { return *c.Server.EnableDebugFlagsHandler }, false},
}

func TestHardeningFlagsReachTheConfig(t *testing.T) {
	o, _, err := parseKubelet(t, "", "--tls-min-version", "VersionTLS13", "--tls-cipher-suites", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
		"--streaming-connection-idle-timeout", "30m", "--protect-kernel-defaults")
	if err != nil {
		t.Fatal(err)
	}
	s := o.config().Server
	if s.TLSMinVersion != "VersionTLS13" || len(s.TLSCipherSuites) != 1 || s.StreamingConnectionIdleTimeout != 30*time.Minute ||
		!o.server.hardening.protectKernelDefaults {
		t.Errorf("server config = %+v, protectKernelDefaults %v", s, o.server.hardening.protectKernelDefaults)
	}
	def, _, err := parseKubelet(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if d := def.config().Server.StreamingConnectionIdleTimeout; d != 4*time.Hour {
		t.Errorf("default streaming idle timeout = %v, want the kubelet's 4h", d)
	}
	// kubeadm writes 0s: unset, the kubelet's default.
	zero, _, err := parseKubelet(t, kcHeader+"streamingConnectionIdleTimeout: 0s\n")
	if err != nil {
		t.Fatal(err)
	}
	if d := zero.config().Server.StreamingConnectionIdleTimeout; d != 4*time.Hour {
		t.Errorf("streamingConnectionIdleTimeout 0s = %v, want 4h", d)
	}
}

func TestHardeningValuesAreRefusedNamingThem(t *testing.T) {
	for _, tc := range []struct {
		file string
		args []string
		want string
	}{
		{args: []string{"--streaming-connection-idle-timeout", "0"}, want: "must be more than 0"},
		{args: []string{"--streaming-connection-idle-timeout", "-1m"}, want: "must be more than 0"},
		{args: []string{"--tls-min-version", "VersionTLS10"}, want: `tlsMinVersion "VersionTLS10" is refused`},
		{args: []string{"--tls-cipher-suites", "TLS_RSA_WITH_RC4_128_SHA"}, want: "TLS_RSA_WITH_RC4_128_SHA refused"},
		{file: kcHeader + "tlsCipherSuites: [TLS_NOT_A_SUITE]\n", want: "TLS_NOT_A_SUITE"},
		{file: kcHeader + "tlsMinVersion: VersionTLS11\n", want: `"VersionTLS11" is refused`},
	} {
		o, _, err := parseKubelet(t, tc.file, tc.args...)
		if err == nil {
			err = o.config().Server.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %v: err = %v, want one containing %q", tc.file, tc.args, err, tc.want)
		}
	}
}

// procSys writes a fake /proc/sys with the kubelet's values but those in
// differ.
func procSys(t *testing.T, differ map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, kd := range kernelDefaults {
		v := differ[kd.name]
		if v == "" {
			v = strconv.Itoa(kd.want)
		}
		path := filepath.Join(dir, strings.ReplaceAll(kd.name, ".", "/"))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if v == "missing" {
			continue
		}
		if err := os.WriteFile(path, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestProtectKernelDefaults(t *testing.T) {
	good := procSys(t, nil)
	if err := checkKernelDefaults(good, true, logr.Discard()); err != nil {
		t.Errorf("the kubelet's values with protect: %v, want nil", err)
	}
	bad := procSys(t, map[string]string{"vm.overcommit_memory": "0", "kernel.panic": "0", "kernel.keys.root_maxbytes": "missing"})
	err := checkKernelDefaults(bad, true, logr.Discard())
	for _, want := range []string{"invalid kernel flag: vm.overcommit_memory, expected value: 1, actual value: 0",
		"invalid kernel flag: kernel.panic, expected value: 10, actual value: 0", "kernel flag kernel.keys.root_maxbytes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("protect with differing values: err = %v, want it to name %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "panic_on_oops") {
		t.Errorf("a flag with the kubelet's value is named: %v", err)
	}
	// Without protect nothing is changed and the start goes on.
	if err := checkKernelDefaults(bad, false, logr.Discard()); err != nil {
		t.Errorf("without protect: %v, want nil", err)
	}
	if b, _ := os.ReadFile(filepath.Join(bad, "vm", "overcommit_memory")); string(b) != "0\n" {
		t.Errorf("vm.overcommit_memory was changed to %q", b)
	}
}

func TestVerbositySetterChangesTheLoggersVerbosity(t *testing.T) {
	cfg := textlogger.NewConfig(textlogger.Verbosity(0))
	set := verbositySetter(cfg)
	if msg, err := set("4"); err != nil || msg != "successfully set klog.logging.verbosity to 4" {
		t.Fatalf("set 4 = %q, %v", msg, err)
	}
	if got := cfg.Verbosity().String(); got != "4" {
		t.Errorf("verbosity = %s, want 4", got)
	}
	if !textlogger.NewLogger(cfg).V(4).Enabled() {
		t.Errorf("V(4) is not enabled after setting 4")
	}
	if _, err := set("x"); err == nil {
		t.Errorf("set x: no error")
	}
}
