package cri

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestManagedHostsFileContent(t *testing.T) {
	t.Parallel()
	aliases := []corev1.HostAlias{{IP: "10.9.9.9", Hostnames: []string{"foo.local", "bar.local"}}, {IP: "10.9.9.10", Hostnames: []string{"baz"}}}
	cases := []struct {
		name    string
		ips     []string
		host    string
		domain  string
		aliases []corev1.HostAlias
		want    string
	}{
		{"a pod with an IP", []string{"10.1.0.7"}, "web", "", nil,
			"# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
				"fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n" +
				"10.1.0.7\tweb\n"},
		{"a dual-stack pod with a subdomain and aliases", []string{"10.1.0.7", "fd00::7"}, "web", "sub.ns.svc.cluster.local", aliases,
			"# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
				"fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n" +
				"10.1.0.7\tweb.sub.ns.svc.cluster.local\tweb\nfd00::7\tweb.sub.ns.svc.cluster.local\tweb\n" +
				"\n# Entries added by HostAliases.\n10.9.9.9\tfoo.local\tbar.local\n10.9.9.10\tbaz\n"},
	}
	for _, c := range cases {
		if got := string(managedHostsFileContent(c.ips, c.host, c.domain, c.aliases)); got != c.want {
			t.Errorf("%s: content =\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
	got := string(nodeHostsFileContent([]byte("127.0.0.1 localhost\n10.0.0.1 node-a\n"), aliases[:1]))
	want := "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n10.0.0.1 node-a\n\n# Entries added by HostAliases.\n10.9.9.9\tfoo.local\tbar.local\n"
	if got != want {
		t.Errorf("host network content =\n%s\nwant\n%s", got, want)
	}
}

// hostsMount returns the container's /etc/hosts mount, or nil.
func hostsMount(cfg *runtimeapi.ContainerConfig) *runtimeapi.Mount {
	for _, m := range cfg.GetMounts() {
		if m.GetContainerPath() == "/etc/hosts" {
			return m
		}
	}
	return nil
}

func TestEtcHostsIsMountedIntoContainers(t *testing.T) {
	nodeHosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(nodeHosts, []byte("127.0.0.1 localhost\n10.0.0.1 node-a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		mutate   func(*corev1.Pod)
		wantHead string // "" for no mount
	}{
		{"a pod on the pod network gets the managed file with its IP and aliases", func(p *corev1.Pod) {
			p.Spec.Hostname, p.Spec.Subdomain = "h", "sub"
			p.Spec.HostAliases = []corev1.HostAlias{{IP: "10.9.9.9", Hostnames: []string{"foo.local"}}}
		}, "# Kubernetes-managed hosts file.\n"},
		{"a hostNetwork pod gets the node's file", func(p *corev1.Pod) { p.Spec.HostNetwork = true },
			"# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n10.0.0.1 node-a\n"},
		{"a container that mounts /etc/hosts itself keeps it", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "h", MountPath: "/etc/hosts"}}
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEnv(t, func(cfg *Config) { cfg.NodeHostsFile = nodeHosts })
			pod := newPod("u1", "app")
			c.mutate(pod)
			// The volume manager's part: the container's own /etc/hosts volume.
			vols := &fakeVolumes{}
			vols.set(pod.UID, map[string]noderuntime.Volume{"h": {HostPath: nodeHosts}})
			e.m.SetVolumeGetter(vols)
			if err := e.sync(t, pod).Error(); err != nil {
				t.Fatalf("sync: %v", err)
			}
			m := hostsMount(e.rs.lastContainerConfig(t))
			if c.wantHead == "" {
				if m != nil && m.GetHostPath() == filepath.Join(mustPodDir(t, e.m, pod.UID), "etc-hosts") {
					t.Fatalf("the managed hosts file was mounted over the container's own /etc/hosts")
				}
				return
			}
			if m == nil || m.GetHostPath() != filepath.Join(mustPodDir(t, e.m, pod.UID), "etc-hosts") || m.GetReadonly() {
				t.Fatalf("/etc/hosts mount = %v, want the pod's etc-hosts, writable", m)
			}
			data, err := os.ReadFile(m.GetHostPath())
			if err != nil {
				t.Fatal(err)
			}
			if got := string(data); len(got) < len(c.wantHead) || got[:len(c.wantHead)] != c.wantHead {
				t.Fatalf("hosts file =\n%s\nwant it to start with\n%s", got, c.wantHead)
			}
			if !pod.Spec.HostNetwork {
				ips := e.status(t, pod).IPs
				want := ips[0] + "\th.sub.default.svc.cluster.local\th\n\n# Entries added by HostAliases.\n10.9.9.9\tfoo.local\n"
				if got := string(data); len(got) < len(want) || got[len(got)-len(want):] != want {
					t.Fatalf("hosts file =\n%s\nwant it to end with\n%s", got, want)
				}
			}
		})
	}
}

func TestEtcHostsWaitsForThePodIP(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "app")
	ps := &podStart{pod: pod}
	mounts, err := e.m.withEtcHosts(ps, &pod.Spec.Containers[0], nil)
	if err != nil || len(mounts) != 0 {
		t.Fatalf("withEtcHosts without a pod IP = %v, %v; want no mount", mounts, err)
	}
}
