package main

import (
	"strconv"
	"strings"

	"github.com/nodekit/nodekit"
)

// hardeningFields are the KubeletConfiguration fields of the secure
// port's hardening (the CIS kubelet items); init adds them to
// supportedFields.
var hardeningFields = []string{
	"tlsMinVersion", "tlsCipherSuites", "streamingConnectionIdleTimeout", "protectKernelDefaults",
	"enableProfilingHandler", "enableSystemLogHandler", "enableDebugFlagsHandler",
}

func init() {
	supportedFields = append(supportedFields, hardeningFields...)
}

// hardeningFlags are the flags the file's hardening fields set. A
// streamingConnectionIdleTimeout of 0s is unset (the kubelet's default,
// 4h), as the kubelet's defaulting reads it.
func (f *kubeletConfigFile) hardeningFlags() []flagValue {
	kc := &f.kc
	var out []flagValue
	if f.set["tlsMinVersion"] {
		out = append(out, flagValue{"tlsMinVersion", "tls-min-version", kc.TLSMinVersion})
	}
	if f.set["tlsCipherSuites"] {
		out = append(out, flagValue{"tlsCipherSuites", "tls-cipher-suites", strings.Join(kc.TLSCipherSuites, ",")})
	}
	if f.set["streamingConnectionIdleTimeout"] {
		out = append(out, flagValue{"streamingConnectionIdleTimeout", "streaming-connection-idle-timeout", kc.StreamingConnectionIdleTimeout.Duration.String()})
	}
	if f.set["protectKernelDefaults"] {
		out = append(out, flagValue{"protectKernelDefaults", "protect-kernel-defaults", strconv.FormatBool(kc.ProtectKernelDefaults)})
	}
	return out
}

// applyHardening sets the hardening fields that have no flag (as the
// kubelet, which has none for them): the three debugging handlers.
func (o *options) applyHardening(cfg *nodekit.Config) {
	kc := &o.kubelet.kc
	h := &o.server.hardening
	h.enableProfilingHandler = kc.EnableProfilingHandler
	h.enableSystemLogHandler = kc.EnableSystemLogHandler
	h.enableDebugFlags = kc.EnableDebugFlagsHandler
	h.apply(cfg)
}
