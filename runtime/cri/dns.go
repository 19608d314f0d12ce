package cri

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The API's limits on a pod's resolver settings
// (k8s.io/kubernetes/pkg/apis/core/validation), which the kubelet enforces
// by cutting.
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
	maxDNSSearchLen       = 253
	// maxFQDNLen is the longest hostname the kernel takes (64 bytes with
	// the terminating NUL).
	maxFQDNLen = 64
)

// eventMissingClusterDNS is the kubelet's warning event for a ClusterFirst
// pod on a node without cluster DNS.
const (
	eventMissingClusterDNS   = "MissingClusterDNS"
	missingClusterDNSMessage = "kubelet does not have ClusterDNS IP configured and cannot create Pod using \"ClusterFirst\" policy. Falling back to \"Default\" policy."
)

// clusterDNSOptions are the resolver options of a pod using cluster DNS.
var clusterDNSOptions = [...]string{"ndots:5"}

// dnsKind is how a pod resolves names.
type dnsKind int

const (
	dnsCluster dnsKind = iota
	dnsHost
	dnsNone
)

// podDNSKind maps dnsPolicy as the kubelet does: ClusterFirst of a
// hostNetwork pod is Default; an unknown policy is ClusterFirst.
func podDNSKind(pod *corev1.Pod) dnsKind {
	switch pod.Spec.DNSPolicy {
	case corev1.DNSNone:
		return dnsNone
	case corev1.DNSDefault:
		return dnsHost
	case corev1.DNSClusterFirst, "":
		if pod.Spec.HostNetwork {
			return dnsHost
		}
	}
	return dnsCluster
}

// dnsConfig is the pod's resolver configuration, as the kubelet builds it:
// dnsPolicy None starts empty; Default starts from the host's resolver
// file; ClusterFirst (and ClusterFirstWithHostNet) uses ClusterDNS with the
// cluster search path before the host's and ndots:5, or, without
// ClusterDNS, falls back to Default with a warning. spec.dnsConfig is then
// merged in (duplicates dropped, options by name) and the API's limits
// applied.
func (m *Manager) dnsConfig(pod *corev1.Pod) (*runtimeapi.DNSConfig, error) {
	data, err := os.ReadFile(m.cfg.ResolvConf)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("read resolver file %s: %w", m.cfg.ResolvConf, err)
	}
	out := parseResolvConf(data)
	switch podDNSKind(pod) {
	case dnsNone:
		out = &runtimeapi.DNSConfig{}
	case dnsCluster:
		if len(m.cfg.ClusterDNS) > 0 {
			out.Servers = slices.Clone(m.cfg.ClusterDNS)
			out.Searches = m.clusterSearches(pod.Namespace, out.Searches)
			out.Options = slices.Clone(clusterDNSOptions[:])
			break
		}
		m.log.Info("No cluster DNS configured: a pod with dnsPolicy ClusterFirst gets the host's resolver settings (dnsPolicy Default)",
			"pod", formatPod(pod), "resolvConf", m.cfg.ResolvConf)
		m.podEvent(pod, corev1.EventTypeWarning, eventMissingClusterDNS, "pod: %q. %s", formatPod(pod), missingClusterDNSMessage)
	}
	if pc := pod.Spec.DNSConfig; pc != nil {
		out.Servers = omitDuplicates(append(slices.Clone(out.Servers), pc.Nameservers...))
		out.Searches = omitDuplicates(append(slices.Clone(out.Searches), pc.Searches...))
		out.Options = mergeDNSOptions(out.Options, pc.Options)
	}
	m.fitDNSLimits(pod, out)
	return out, nil
}

// clusterSearches is <ns>.svc.<domain> svc.<domain> <domain> and then the
// host's search domains, without duplicates.
func (m *Manager) clusterSearches(namespace string, host []string) []string {
	d := m.cfg.ClusterDomain
	return omitDuplicates(append([]string{namespace + ".svc." + d, "svc." + d, d}, host...))
}

// fitDNSLimits cuts the nameservers and the search path to the API's limits,
// logging what it dropped.
func (m *Manager) fitDNSLimits(pod *corev1.Pod, cfg *runtimeapi.DNSConfig) {
	if len(cfg.Servers) > maxDNSNameservers {
		cfg.Servers = cfg.Servers[:maxDNSNameservers]
		m.log.Info("Nameserver limits were exceeded, some nameservers have been omitted", "pod", formatPod(pod), "nameservers", cfg.Servers)
	}
	exceeded := false
	if len(cfg.Searches) > maxDNSSearchPaths {
		cfg.Searches, exceeded = cfg.Searches[:maxDNSSearchPaths], true
	}
	kept := cfg.Searches[:0]
	for _, s := range cfg.Searches {
		if len(s) > maxDNSSearchLen {
			exceeded = true
			continue
		}
		kept = append(kept, s)
	}
	cfg.Searches = kept
	for len(cfg.Searches) > 0 && len(strings.Join(cfg.Searches, " ")) > maxDNSSearchListChars {
		cfg.Searches, exceeded = cfg.Searches[:len(cfg.Searches)-1], true
	}
	if exceeded {
		m.log.Info("Search Line limits were exceeded, some search paths have been omitted", "pod", formatPod(pod), "searches", cfg.Searches)
	}
}

// mergeDNSOptions adds the pod's options to existing ones; an option of the
// same name replaces the earlier one in place.
func mergeDNSOptions(existing []string, add []corev1.PodDNSConfigOption) []string {
	out := slices.Clone(existing)
	set := func(name, opt string) {
		for i, o := range out {
			if n, _, _ := strings.Cut(o, ":"); n == name {
				out[i] = opt
				return
			}
		}
		out = append(out, opt)
	}
	for _, o := range add {
		opt := o.Name
		if o.Value != nil && *o.Value != "" {
			opt += ":" + *o.Value
		}
		set(o.Name, opt)
	}
	return out
}

func omitDuplicates(list []string) []string {
	seen := map[string]bool{}
	out := list[:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// parseResolvConf reads nameserver, search and options lines of a
// resolv.conf; comments and other keywords are ignored, a later search line
// replaces an earlier one as the resolver does (a trailing dot and the root
// domain "." are dropped), and a later option replaces an earlier one of
// the same name.
func parseResolvConf(data []byte) *runtimeapi.DNSConfig {
	out := &runtimeapi.DNSConfig{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "nameserver":
			out.Servers = append(out.Servers, fields[1])
		case "search":
			out.Searches = nil
			for _, s := range fields[1:] {
				if s != "." {
					out.Searches = append(out.Searches, strings.TrimSuffix(s, "."))
				}
			}
		case "options":
			for _, o := range fields[1:] {
				name, value, _ := strings.Cut(o, ":")
				out.Options = mergeDNSOptions(out.Options, []corev1.PodDNSConfigOption{{Name: name, Value: &value}})
			}
		}
	}
	return out
}

// podHostname is the sandbox's hostname: spec.hostnameOverride, else
// spec.hostname, else the pod name, cut to a DNS label (hostnameAndDomain);
// with setHostnameAsFQDN and a subdomain (never with an override), the
// fully qualified <hostname>.<subdomain>.<ns>.svc.<domain>, which must fit
// the kernel's 64 bytes.
func (m *Manager) podHostname(pod *corev1.Pod) (string, error) {
	h, domain, err := m.hostnameAndDomain(pod)
	if err != nil {
		return "", err
	}
	fqdn := pod.Spec.SetHostnameAsFQDN != nil && *pod.Spec.SetHostnameAsFQDN
	if !fqdn || domain == "" {
		return h, nil
	}
	h = h + "." + domain
	if len(h) > maxFQDNLen {
		return "", fmt.Errorf("failed to construct FQDN from pod hostname and cluster domain, FQDN %s is too long (%d characters is the max, %d characters requested)", h, maxFQDNLen, len(h))
	}
	return h, nil
}
