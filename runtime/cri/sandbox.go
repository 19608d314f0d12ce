package cri

import (
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// maxHostnameLen is the longest hostname a pod gets (a DNS label).
const maxHostnameLen = 63

// podLogDir is where the pod's container logs go:
// <PodLogsDir>/<namespace>_<name>_<uid>, as the kubelet's.
func (m *Manager) podLogDir(namespace, name string, uid types.UID) string {
	return filepath.Join(m.cfg.PodLogsDir, namespace+"_"+name+"_"+string(uid))
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
	}
	linux, err := m.sandboxLinuxConfig(pod)
	if err != nil {
		return nil, err
	}
	cfg.Linux = linux
	// runc refuses a hostname for a pod in the node's network namespace.
	if !pod.Spec.HostNetwork {
		if cfg.Hostname, err = m.podHostname(pod); err != nil {
			return nil, err
		}
	}
	dns, err := m.dnsConfig(pod)
	if err != nil {
		return nil, err
	}
	cfg.DnsConfig = dns
	return cfg, nil
}

// sandboxLinuxConfig is the sandbox's Linux settings as the kubelet sends
// them: its pod cgroup, the pod-level security context (namespaces, user,
// groups, SELinux, the RuntimeDefault seccomp profile), sysctls, and the
// pod's aggregated resources and overhead.
func (m *Manager) sandboxLinuxConfig(pod *corev1.Pod) (*runtimeapi.LinuxPodSandboxConfig, error) {
	sc := &runtimeapi.LinuxSandboxSecurityContext{
		NamespaceOptions: namespaceOptions(pod),
		Privileged:       anyPrivileged(pod),
		Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
	}
	out := &runtimeapi.LinuxPodSandboxConfig{
		CgroupParent:    m.cgroups.parentOf(pod),
		SecurityContext: sc,
		Sysctls:         map[string]string{},
	}
	if psc := pod.Spec.SecurityContext; psc != nil {
		if psc.RunAsUser != nil {
			sc.RunAsUser = &runtimeapi.Int64Value{Value: *psc.RunAsUser}
		}
		if psc.RunAsGroup != nil {
			sc.RunAsGroup = &runtimeapi.Int64Value{Value: *psc.RunAsGroup}
		}
		groups, policy, err := supplementalGroups(psc)
		if err != nil {
			return nil, err
		}
		sc.SupplementalGroups, sc.SupplementalGroupsPolicy = groups, policy
		sc.SelinuxOptions = seLinuxOption(psc.SELinuxOptions)
		for _, s := range psc.Sysctls {
			out.Sysctls[s.Name] = s.Value
		}
	}
	out.Resources, out.Overhead = m.sandboxResources(pod)
	return out, nil
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
