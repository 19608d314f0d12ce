package cri

import (
	"os"
	"strings"
	"testing"
)

// TestHostnameOverrideAsTheKubelet checks spec.hostnameOverride as the
// kubelet's GeneratePodHostNameAndDomain applies it: the sandbox's hostname
// and the hosts file's name, no domain (setHostnameAsFQDN and subdomain play
// no part), cut to 63 characters, and a name that is no DNS subdomain
// refused.
func TestHostnameOverrideAsTheKubelet(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name             string
		override         string
		hostname, subdom string
		wantHost         string
		wantDomain       string
		wantErr          string
	}{
		{"the override is the hostname", "override-1", "", "", "override-1", "", ""},
		{"it wins over spec.hostname and drops the subdomain's domain", "override-1", "db-0", "db", "override-1", "", ""},
		{"a dotted subdomain is kept whole", "node.example.com", "", "", "node.example.com", "", ""},
		{"64 characters are cut to 63", strings.Repeat("a", 64), "", "", strings.Repeat("a", 63), "", ""},
		{"a name that is no DNS subdomain is refused", "Bad_Name", "", "", "", "", `pod HostnameOverride "Bad_Name" is not a valid DNS subdomain`},
		{"without an override spec.hostname and the subdomain apply", "", "db-0", "db", "db-0", "db.default.svc.cluster.local", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEnv(t)
			pod := newPod("u1", "a")
			pod.Spec.Hostname, pod.Spec.Subdomain = c.hostname, c.subdom
			if c.override != "" {
				pod.Spec.HostnameOverride = &c.override
			}
			host, domain, err := e.m.hostnameAndDomain(pod)
			cfg, sbErr := e.m.sandboxConfig(pod, 0)
			if c.wantErr != "" {
				for _, err := range []error{err, sbErr} {
					if err == nil || !strings.Contains(err.Error(), c.wantErr) {
						t.Fatalf("err = %v, want %q", err, c.wantErr)
					}
				}
				return
			}
			if err != nil || sbErr != nil {
				t.Fatal(err, sbErr)
			}
			if host != c.wantHost || domain != c.wantDomain || cfg.Hostname != c.wantHost {
				t.Errorf("hostname %q domain %q sandbox hostname %q, want %q %q", host, domain, cfg.Hostname, c.wantHost, c.wantDomain)
			}
		})
	}
}

// TestHostnameOverrideInEtcHosts checks the managed hosts file of a pod
// with an override: its IP names the override alone.
func TestHostnameOverrideInEtcHosts(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "app")
	override, fqdn := "my-host", true
	pod.Spec.HostnameOverride, pod.Spec.Subdomain, pod.Spec.SetHostnameAsFQDN = &override, "sub", &fqdn
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if got := e.rs.sandboxConfigs[0].GetHostname(); got != "my-host" {
		t.Errorf("sandbox hostname %q, want my-host", got)
	}
	m := hostsMount(e.rs.lastContainerConfig(t))
	if m == nil {
		t.Fatal("no /etc/hosts mount")
	}
	data, err := os.ReadFile(m.GetHostPath())
	if err != nil {
		t.Fatal(err)
	}
	if want := e.status(t, pod).IPs[0] + "\tmy-host\n"; !strings.HasSuffix(string(data), want) {
		t.Errorf("hosts file =\n%s\nwant it to end with %q", data, want)
	}
}
