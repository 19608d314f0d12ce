package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/klog/v2/textlogger"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/server"
)

// defaultStreamingIdleTimeout is the kubelet's default
// streamingConnectionIdleTimeout.
const defaultStreamingIdleTimeout = 4 * time.Hour

// hardeningOptions are the secure port's hardening flags, named as the
// kubelet's, and the kernel check at start.
type hardeningOptions struct {
	tlsMinVersion          string
	tlsCipherSuites        []string
	streamingIdleTimeout   idleTimeoutFlag
	protectKernelDefaults  bool
	enableProfilingHandler *bool // config file only, as the kubelet's
	enableSystemLogHandler *bool
	enableDebugFlags       *bool
}

// addHardeningFlags adds --tls-min-version, --tls-cipher-suites,
// --streaming-connection-idle-timeout and --protect-kernel-defaults.
func (o *options) addHardeningFlags(fs *pflag.FlagSet) {
	h := &o.server.hardening
	h.streamingIdleTimeout = idleTimeoutFlag(defaultStreamingIdleTimeout)
	fs.StringVar(&h.tlsMinVersion, "tls-min-version", "", "lowest TLS version of the secure port: "+
		"VersionTLS12 (default) or VersionTLS13; the older versions are refused")
	fs.StringSliceVar(&h.tlsCipherSuites, "tls-cipher-suites", nil, "TLS 1.2 cipher suites of the secure port, comma-separated "+
		"(default: ECDHE with AES-GCM or ChaCha20-Poly1305 only, "+strings.Join(server.DefaultTLSCipherSuites, ", ")+
		"); unknown names and the suites Go lists as insecure ("+strings.Join(cliflag.InsecureTLSCipherNames(), ", ")+") are refused")
	fs.Var(&h.streamingIdleTimeout, "streaming-connection-idle-timeout", "close an exec, attach or port-forward connection through "+
		"the secure port after this long without traffic (more than 0: nodekit has no \"never\")")
	fs.BoolVar(&h.protectKernelDefaults, "protect-kernel-defaults", false, "fail at start when a kernel setting the kubelet "+
		"tunes (vm.overcommit_memory, vm.panic_on_oom, kernel.panic, kernel.panic_on_oops, kernel.keys.root_maxkeys, "+
		"kernel.keys.root_maxbytes) differs from the kubelet's value; without it nodekit logs the differences and changes nothing")
}

// apply sets the hardening settings on cfg.Server.
func (h *hardeningOptions) apply(cfg *nodekit.Config) {
	cfg.Server.TLSMinVersion = h.tlsMinVersion
	cfg.Server.TLSCipherSuites = h.tlsCipherSuites
	cfg.Server.StreamingConnectionIdleTimeout = time.Duration(h.streamingIdleTimeout)
	cfg.Server.EnableProfilingHandler = h.enableProfilingHandler
	cfg.Server.EnableSystemLogHandler = h.enableSystemLogHandler
	cfg.Server.EnableDebugFlagsHandler = h.enableDebugFlags
}

// idleTimeoutFlag is a duration flag that refuses 0 and negative values:
// the kubelet's 0 ("no timeout") is what the CIS benchmark (4.2.5) flags,
// and nodekit always bounds idle streams.
type idleTimeoutFlag time.Duration

func (f *idleTimeoutFlag) String() string { return time.Duration(*f).String() }

func (f *idleTimeoutFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if d <= 0 {
		return fmt.Errorf("%s: must be more than 0 (nodekit always closes idle streams; the default is %s)", s, defaultStreamingIdleTimeout)
	}
	*f = idleTimeoutFlag(d)
	return nil
}

func (f *idleTimeoutFlag) Type() string { return "duration" }

// verbositySetter sets the text logger's verbosity at run time, for the
// secure port's /debug/flags/v (the kubelet's enableDebugFlagsHandler). It
// answers as the kubelet does.
func verbositySetter(c *textlogger.Config) server.VerbositySetter {
	return func(v string) (string, error) {
		if err := c.Verbosity().Set(v); err != nil {
			return "", fmt.Errorf("failed set klog.logging.verbosity %s: %w", v, err)
		}
		return "successfully set klog.logging.verbosity to " + v, nil
	}
}
