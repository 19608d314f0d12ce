package cri

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// The kubelet-managed /etc/hosts, as the kubelet writes it.
const (
	etcHostsPath = "/etc/hosts"
	// etcHostsFile is the pod's hosts file, in its pod directory.
	etcHostsFile = "etc-hosts"
	// managedHostsHeader starts the file of a pod with its own network.
	managedHostsHeader = "# Kubernetes-managed hosts file.\n"
	// managedHostsHeaderWithHostNetwork starts the file of a hostNetwork
	// pod, which is the node's own hosts file.
	managedHostsHeaderWithHostNetwork = "# Kubernetes-managed hosts file (host network).\n"
)

// withEtcHosts adds the kubelet-managed /etc/hosts to a container's mounts,
// as the kubelet's makeMounts does: unless the container mounts a volume at
// /etc/hosts itself, and only once the pod has an IP, the container gets
// the pod's hosts file, rewritten before each container start. For a pod
// with its own network the file names localhost, the IPv6 loopback names
// and the pod's IPs with its hostname (and FQDN when it has a subdomain);
// for a hostNetwork pod it is the node's own hosts file (the kubelet always
// knows a hostNetwork pod's IPs: the node's). The pod's hostAliases follow
// in both.
func (m *Manager) withEtcHosts(ps *podStart, c *corev1.Container, mounts []*runtimeapi.Mount) ([]*runtimeapi.Mount, error) {
	pod := ps.pod
	if len(ps.podIPs) == 0 && !pod.Spec.HostNetwork {
		return mounts, nil
	}
	for _, vm := range c.VolumeMounts {
		if vm.MountPath == etcHostsPath {
			return mounts, nil
		}
	}
	var content []byte
	if pod.Spec.HostNetwork {
		node, err := os.ReadFile(m.nodeHostsFile())
		if err != nil {
			return nil, fmt.Errorf("%w: container %q: read the node's hosts file: %w", noderuntime.ErrConfig, c.Name, err)
		}
		content = nodeHostsFileContent(node, pod.Spec.HostAliases)
	} else {
		hostname, domain, err := m.hostnameAndDomain(pod)
		if err != nil {
			return nil, fmt.Errorf("%w: container %q: %w", noderuntime.ErrConfig, c.Name, err)
		}
		content = managedHostsFileContent(ps.podIPs, hostname, domain, pod.Spec.HostAliases)
	}
	dir, err := m.ensurePodDir(pod.UID)
	if err != nil {
		return nil, fmt.Errorf("%w: pod directory of %s: %w", noderuntime.ErrConfig, formatPod(pod), err)
	}
	path := filepath.Join(dir, etcHostsFile)
	if err := writeHostsFile(path, content); err != nil {
		return nil, fmt.Errorf("%w: container %q: write hosts file: %w", noderuntime.ErrConfig, c.Name, err)
	}
	return append(mounts, &runtimeapi.Mount{ContainerPath: etcHostsPath, HostPath: path, SelinuxRelabel: true}), nil
}

// nodeHostsFile is the node's hosts file that hostNetwork pods see.
func (m *Manager) nodeHostsFile() string {
	if m.cfg.NodeHostsFile != "" {
		return m.cfg.NodeHostsFile
	}
	return etcHostsPath
}

// writeHostsFile writes the hosts file world-readable, as the kubelet does.
func writeHostsFile(path string, content []byte) error {
	if err := os.WriteFile(path, content, 0o644); err != nil {
		return err
	}
	return os.Chmod(path, 0o644)
}

// hostnameAndDomain are the pod's hostname and domain, as the kubelet's
// GeneratePodHostNameAndDomain makes them: spec.hostnameOverride (a DNS
// subdomain) with no domain when set; else spec.hostname or the pod's name,
// with <subdomain>.<namespace>.svc.<cluster domain> when it has a
// subdomain. The hostname is cut to a DNS label's 63 characters. The
// sandbox's hostname and the hosts file both come from here.
func (m *Manager) hostnameAndDomain(pod *corev1.Pod) (string, string, error) {
	if o := pod.Spec.HostnameOverride; o != nil {
		if msgs := validation.IsDNS1123Subdomain(*o); len(msgs) != 0 {
			return "", "", fmt.Errorf("pod HostnameOverride %q is not a valid DNS subdomain: %s", *o, strings.Join(msgs, ";"))
		}
		return cutHostname(*o), "", nil
	}
	h := pod.Spec.Hostname
	if h == "" {
		h = pod.Name
	}
	return cutHostname(h), m.hostDomain(pod), nil
}

// cutHostname cuts h to a DNS label's length, never ending in '-' or '.'.
func cutHostname(h string) string {
	if len(h) > maxHostnameLen {
		h = strings.TrimRight(h[:maxHostnameLen], "-.")
	}
	return h
}

// hostDomain is the pod's domain when it has a subdomain:
// <subdomain>.<namespace>.svc.<cluster domain>; "" otherwise.
func (m *Manager) hostDomain(pod *corev1.Pod) string {
	if pod.Spec.Subdomain == "" {
		return ""
	}
	return fmt.Sprintf("%s.%s.svc.%s", pod.Spec.Subdomain, pod.Namespace, m.cfg.ClusterDomain)
}

// managedHostsFileContent is the hosts file of a pod with its own network.
func managedHostsFileContent(ips []string, hostname, domain string, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeader)
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	for _, ip := range ips {
		if domain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, hostname, domain, hostname)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
		}
	}
	b.Write(hostAliasEntries(aliases))
	return b.Bytes()
}

// nodeHostsFileContent is the hosts file of a hostNetwork pod: the node's.
func nodeHostsFileContent(node []byte, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeaderWithHostNetwork)
	b.Write(node)
	b.Write(hostAliasEntries(aliases))
	return b.Bytes()
}

// hostAliasEntries are the hostAliases lines: each IP with all its names.
func hostAliasEntries(aliases []corev1.HostAlias) []byte {
	if len(aliases) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("\n# Entries added by HostAliases.\n")
	for _, a := range aliases {
		fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
	}
	return b.Bytes()
}
