package cri

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// maxHostnameLen is the longest hostname a pod gets (a DNS label).
const maxHostnameLen = 63

// podLogDir is where the pod's container logs go:
// <RootDir>/logs/<namespace>_<name>_<uid>.
func (m *Manager) podLogDir(namespace, name string, uid types.UID) string {
	return filepath.Join(m.cfg.RootDir, "logs", namespace+"_"+name+"_"+string(uid))
}

// sandboxConfig builds the PodSandboxConfig of pod for the given attempt. It
// reads the host resolver file when the pod's DNS policy uses it.
func (m *Manager) sandboxConfig(pod *corev1.Pod, attempt uint32) (*runtimeapi.PodSandboxConfig, error) {
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt,
		},
		LogDirectory: m.podLogDir(pod.Namespace, pod.Name, pod.UID),
		Labels:       m.sandboxLabels(pod),
		Annotations:  sandboxAnnotations(pod),
		PortMappings: portMappings(pod),
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: namespaceOptions(pod),
				Privileged:       anyPrivileged(pod),
			},
		},
	}
	// runc refuses a hostname for a pod in the node's network namespace.
	if !pod.Spec.HostNetwork {
		cfg.Hostname = podHostname(pod)
	}
	if m.cfg.CgroupParent != "" {
		cfg.Linux.CgroupParent = path.Join("/", m.cfg.CgroupParent, "pod"+string(pod.UID))
	}
	dns, err := m.dnsConfig(pod)
	if err != nil {
		return nil, err
	}
	cfg.DnsConfig = dns
	return cfg, nil
}

// podHostname is spec.hostname, else the pod name, cut to a DNS label.
func podHostname(pod *corev1.Pod) string {
	h := pod.Spec.Hostname
	if h == "" {
		h = pod.Name
	}
	if len(h) > maxHostnameLen {
		h = strings.TrimRight(h[:maxHostnameLen], "-.")
	}
	return h
}

// portMappings lists the container ports that ask for a host port.
func portMappings(pod *corev1.Pod) []*runtimeapi.PortMapping {
	var out []*runtimeapi.PortMapping
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			out = append(out, &runtimeapi.PortMapping{
				Protocol:      toProtocol(p.Protocol),
				ContainerPort: p.ContainerPort,
				HostPort:      p.HostPort,
				HostIp:        p.HostIP,
			})
		}
	}
	return out
}

func toProtocol(p corev1.Protocol) runtimeapi.Protocol {
	switch p {
	case corev1.ProtocolUDP:
		return runtimeapi.Protocol_UDP
	case corev1.ProtocolSCTP:
		return runtimeapi.Protocol_SCTP
	}
	return runtimeapi.Protocol_TCP
}

// anyPrivileged reports whether any container of the pod (regular, init or
// ephemeral) is privileged; the sandbox must be privileged then.
func anyPrivileged(pod *corev1.Pod) bool {
	privileged := func(sc *corev1.SecurityContext) bool {
		return sc != nil && sc.Privileged != nil && *sc.Privileged
	}
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if privileged(list[i].SecurityContext) {
				return true
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if privileged(pod.Spec.EphemeralContainers[i].SecurityContext) {
			return true
		}
	}
	return false
}

// dnsConfig gives the pod the host's resolver settings (nodekit has no
// cluster DNS, so ClusterFirst falls back to them as the kubelet does
// without one) unless dnsPolicy is None; spec.dnsConfig is appended.
func (m *Manager) dnsConfig(pod *corev1.Pod) (*runtimeapi.DNSConfig, error) {
	out := &runtimeapi.DNSConfig{}
	if pod.Spec.DNSPolicy != corev1.DNSNone {
		data, err := os.ReadFile(m.cfg.ResolvConf)
		if err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("read resolver file %s: %w", m.cfg.ResolvConf, err)
		}
		out = parseResolvConf(data)
	}
	if pc := pod.Spec.DNSConfig; pc != nil {
		out.Servers = append(out.Servers, pc.Nameservers...)
		out.Searches = append(out.Searches, pc.Searches...)
		for _, o := range pc.Options {
			opt := o.Name
			if o.Value != nil {
				opt += ":" + *o.Value
			}
			out.Options = append(out.Options, opt)
		}
	}
	return out, nil
}

// parseResolvConf reads nameserver, search and options lines of a
// resolv.conf; comments and other keywords are ignored, and a later search
// line replaces an earlier one as the resolver does.
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
			out.Searches = append([]string(nil), fields[1:]...)
		case "options":
			out.Options = append(out.Options, fields[1:]...)
		}
	}
	return out
}
