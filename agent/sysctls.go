package agent

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"

	"github.com/nodekit/nodekit/agent/admission"
)

// reasonSysctlForbidden is the kubelet's rejection reason for a pod whose
// sysctls are not allowed on the node.
const reasonSysctlForbidden = "SysctlForbidden"

// legacySafeSysctls are the sysctls the kubelet always treats as safe:
// namespaced, and isolated from the other pods of the node.
var legacySafeSysctls = [...]string{
	"kernel.shm_rmid_forced",
	"net.ipv4.ip_local_port_range",
	"net.ipv4.tcp_syncookies",
	"net.ipv4.ping_group_range",
	"net.ipv4.ip_unprivileged_port_start",
	"net.ipv4.tcp_keepalive_time",
	"net.ipv4.tcp_fin_timeout",
	"net.ipv4.tcp_keepalive_intvl",
	"net.ipv4.tcp_keepalive_probes",
}

// kernelGatedSafeSysctls are safe only from the kernel version in which
// they became namespaced.
var kernelGatedSafeSysctls = [...]struct{ name, kernel string }{
	{"net.ipv4.ip_local_reserved_ports", "3.16"},
	{"net.ipv4.tcp_rmem", "4.15"},
	{"net.ipv4.tcp_wmem", "4.15"},
}

// safeSysctls is the kubelet's safe set for a kernel: the legacy ones, and
// the gated ones the kernel namespaces. Without a kernel version (nil) only
// the legacy ones, as the kubelet falls back to.
func safeSysctls(kernel *version.Version) []string {
	out := append([]string(nil), legacySafeSysctls[:]...)
	if kernel == nil {
		return out
	}
	for _, s := range kernelGatedSafeSysctls {
		if kernel.AtLeast(version.MustParseGeneric(s.kernel)) {
			out = append(out, s.name)
		}
	}
	return out
}

// sysctlPattern is what a sysctl name or an allowed-unsafe pattern must
// look like: dot- or slash-separated segments, optionally ending in "*".
var sysctlPattern = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*([a-z0-9]([-_a-z0-9]*[a-z0-9])?)?\*?$`)

// maxSysctlLen is the longest sysctl name the API accepts.
const maxSysctlLen = 253

// sysctlAllowlist decides which sysctls a pod may set, as the kubelet's
// pattern allowlist: exact names and prefixes (patterns ending in "*"),
// each with the kernel namespace it belongs to.
type sysctlAllowlist struct {
	sysctls  map[string]utilsysctl.Namespace
	prefixes map[string]utilsysctl.Namespace
}

// newSysctlAllowlist builds the allowlist of patterns; a pattern that is
// malformed or names a sysctl not known to be namespaced is an error.
func newSysctlAllowlist(patterns []string) (*sysctlAllowlist, error) {
	w := &sysctlAllowlist{sysctls: map[string]utilsysctl.Namespace{}, prefixes: map[string]utilsysctl.Namespace{}}
	for _, p := range patterns {
		if p == "" || len(p) > maxSysctlLen || !sysctlPattern.MatchString(p) {
			return nil, fmt.Errorf("sysctl %q must have at most %d characters and be dot- or slash-separated segments of lowercase letters, digits, '-' and '_', optionally ending in '*'", p, maxSysctlLen)
		}
		ns, nameOrPrefix, prefixed := utilsysctl.GetNamespace(p)
		if ns == utilsysctl.UnknownNamespace {
			return nil, fmt.Errorf("the sysctls %q are not known to be namespaced", nameOrPrefix)
		}
		if prefixed {
			w.prefixes[nameOrPrefix] = ns
		} else {
			w.sysctls[nameOrPrefix] = ns
		}
	}
	return w, nil
}

// validate checks one sysctl of a pod: it must be allowlisted, and not be
// of a namespace the pod shares with the host.
func (w *sysctlAllowlist) validate(name string, hostNet, hostIPC bool) error {
	name = utilsysctl.NormalizeName(name)
	check := func(ns utilsysctl.Namespace) error {
		if (ns == utilsysctl.IPCNamespace && hostIPC) || (ns == utilsysctl.NetNamespace && hostNet) {
			return fmt.Errorf("%q not allowed with host %s enabled", name, ns)
		}
		return nil
	}
	if ns, ok := w.sysctls[name]; ok {
		return check(ns)
	}
	for p, ns := range w.prefixes {
		if strings.HasPrefix(name, p) {
			return check(ns)
		}
	}
	return fmt.Errorf("%q not allowlisted", name)
}

// admit is the kubelet's sysctl admission: every sysctl of the pod's
// security context must pass validate.
func (w *sysctlAllowlist) admit(pod *corev1.Pod) (reason, message string, ok bool) {
	psc := pod.Spec.SecurityContext
	if psc == nil {
		return "", "", true
	}
	for _, s := range psc.Sysctls {
		if err := w.validate(s.Name, pod.Spec.HostNetwork, pod.Spec.HostIPC); err != nil {
			return reasonSysctlForbidden, fmt.Sprintf("forbidden sysctl: %v", err), false
		}
	}
	return "", "", true
}

// validateUnsafeSysctls checks the allowed-unsafe patterns of the config.
func validateUnsafeSysctls(patterns []string) error {
	_, err := newSysctlAllowlist(patterns)
	return err
}

// SysctlAdmission is the kubelet's sysctl admission handler: a pod whose
// sysctls are outside the kernel's safe set and the allowed unsafe
// patterns, or of a namespace it shares with the host (net.* with
// hostNetwork, IPC ones with hostIPC), is refused with SysctlForbidden.
// The allowlist is built at the first pod that sets a sysctl, from the
// running kernel's version. Make one with NewSysctlAdmission.
type SysctlAdmission struct {
	unsafe        []string
	log           logr.Logger
	kernelVersion func() (*version.Version, error)

	once      sync.Once
	allowlist *sysctlAllowlist
	err       error
}

// NewSysctlAdmission returns the sysctl handler for the allowed unsafe
// sysctl patterns (Config.AllowedUnsafeSysctls). It does no I/O.
func NewSysctlAdmission(allowedUnsafe []string, log logr.Logger) *SysctlAdmission {
	return &SysctlAdmission{unsafe: allowedUnsafe, log: log, kernelVersion: hostKernelVersion}
}

// Admit implements admission.Handler. It is safe for concurrent use.
func (h *SysctlAdmission) Admit(attrs *admission.Attributes) admission.Result {
	pod := attrs.Pod
	if pod.Spec.SecurityContext == nil || len(pod.Spec.SecurityContext.Sysctls) == 0 {
		return admission.Admitted()
	}
	w, err := h.sysctls()
	if err != nil {
		return admission.Refused(reasonSysctlForbidden, fmt.Sprintf("forbidden sysctl: invalid allowed unsafe sysctls: %v", err))
	}
	return verdict(w.admit(pod))
}

// sysctls returns the allowlist, built at the first admission from the
// safe set of the running kernel and the allowed unsafe patterns (checked
// by Config.Validate, so an error here means the agent was built
// unvalidated).
func (h *SysctlAdmission) sysctls() (*sysctlAllowlist, error) {
	h.once.Do(func() {
		kernel, err := h.kernelVersion()
		if err != nil {
			h.log.Error(err, "Cannot read the kernel version; allowing only the legacy safe sysctls")
			kernel = nil
		}
		h.allowlist, h.err = newSysctlAllowlist(append(safeSysctls(kernel), h.unsafe...))
	})
	return h.allowlist, h.err
}

// hostKernelVersion reads the running kernel's version.
func hostKernelVersion() (*version.Version, error) {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return nil, fmt.Errorf("read kernel version: %w", err)
	}
	v, err := version.ParseGeneric(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("parse kernel version %q: %w", strings.TrimSpace(string(b)), err)
	}
	return v, nil
}
