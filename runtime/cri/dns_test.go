package cri

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The test env's host resolver file: nameserver 10.0.0.53, search
// example.org, options ndots:2.
func TestPodDNSConfigFollowsTheKubelet(t *testing.T) {
	t.Parallel()
	clusterDNS := func(c *Config) { c.ClusterDNS = []string{"10.96.0.10"}; c.ClusterDomain = "cluster.local" }
	cases := []struct {
		name   string
		policy corev1.DNSPolicy
		host   bool
		extra  *corev1.PodDNSConfig
		cfg    func(*Config)
		want   *runtimeapi.DNSConfig
	}{
		{"ClusterFirst with cluster DNS uses it, the cluster search path before the host's, and ndots:5",
			corev1.DNSClusterFirst, false, nil, clusterDNS,
			&runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"}, Searches: []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local", "example.org"}, Options: []string{"ndots:5"}}},
		{"ClusterFirst without cluster DNS falls back to the host's settings",
			corev1.DNSClusterFirst, false, nil, nil,
			&runtimeapi.DNSConfig{Servers: []string{"10.0.0.53"}, Searches: []string{"example.org"}, Options: []string{"ndots:2"}}},
		{"ClusterFirst of a hostNetwork pod is Default",
			corev1.DNSClusterFirst, true, nil, clusterDNS,
			&runtimeapi.DNSConfig{Servers: []string{"10.0.0.53"}, Searches: []string{"example.org"}, Options: []string{"ndots:2"}}},
		{"ClusterFirstWithHostNet of a hostNetwork pod uses cluster DNS",
			corev1.DNSClusterFirstWithHostNet, true, nil, clusterDNS,
			&runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"}, Searches: []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local", "example.org"}, Options: []string{"ndots:5"}}},
		{"Default uses the host's settings even with cluster DNS",
			corev1.DNSDefault, false, nil, clusterDNS,
			&runtimeapi.DNSConfig{Servers: []string{"10.0.0.53"}, Searches: []string{"example.org"}, Options: []string{"ndots:2"}}},
		{"None uses only dnsConfig",
			corev1.DNSNone, false, &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"a.test"}, Options: []corev1.PodDNSConfigOption{{Name: "edns0"}}}, clusterDNS,
			&runtimeapi.DNSConfig{Servers: []string{"1.1.1.1"}, Searches: []string{"a.test"}, Options: []string{"edns0"}}},
		{"dnsConfig is merged: duplicates dropped, an option of the same name replaced",
			corev1.DNSClusterFirst, false, &corev1.PodDNSConfig{Nameservers: []string{"10.96.0.10", "10.96.0.11"}, Searches: []string{"svc.cluster.local", "b.test"},
				Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("2")}, {Name: "timeout", Value: ptr("1")}}}, clusterDNS,
			&runtimeapi.DNSConfig{Servers: []string{"10.96.0.10", "10.96.0.11"}, Searches: []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local", "example.org", "b.test"}, Options: []string{"ndots:2", "timeout:1"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEnv(t, func(cfg *Config) {
				if c.cfg != nil {
					c.cfg(cfg)
				}
			})
			pod := newPod("u1", "a")
			pod.Spec.DNSPolicy, pod.Spec.HostNetwork, pod.Spec.DNSConfig = c.policy, c.host, c.extra
			if err := e.sync(t, pod).Error(); err != nil {
				t.Fatalf("SyncPod: %v", err)
			}
			got := e.rs.sandboxConfigs[0].GetDnsConfig()
			if !reflect.DeepEqual(got.GetServers(), c.want.Servers) || !reflect.DeepEqual(got.GetSearches(), c.want.Searches) || !reflect.DeepEqual(got.GetOptions(), c.want.Options) {
				t.Errorf("dns config =\n  %v\nwant\n  %v", got, c.want)
			}
		})
	}
}

func TestPodDNSConfigIsCutToTheAPILimits(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	pod := newPod("u1", "a")
	pod.Spec.DNSPolicy = corev1.DNSNone
	cfg := &corev1.PodDNSConfig{Nameservers: []string{"1.0.0.1", "1.0.0.2", "1.0.0.3", "1.0.0.4"}}
	for i := range 40 {
		cfg.Searches = append(cfg.Searches, fmt.Sprintf("d%02d.%s", i, strings.Repeat("x", 60)))
	}
	pod.Spec.DNSConfig = cfg
	got, err := e.m.dnsConfig(pod)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Servers) != maxDNSNameservers {
		t.Errorf("%d nameservers, want %d", len(got.Servers), maxDNSNameservers)
	}
	if n := len(strings.Join(got.Searches, " ")); n > maxDNSSearchListChars || len(got.Searches) > maxDNSSearchPaths || len(got.Searches) == 0 {
		t.Errorf("%d search domains of %d characters, want at most %d and %d", len(got.Searches), n, maxDNSSearchPaths, maxDNSSearchListChars)
	}
	if got.Searches[0] != cfg.Searches[0] {
		t.Errorf("first search %q, want the first given kept", got.Searches[0])
	}
}

func TestSandboxHostnameWithSubdomainAndFQDN(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name              string
		hostname, subdom  string
		fqdn, hostNetwork bool
		want              string
		wantErr           string
	}{
		{"the pod name is the hostname by default", "", "", false, false, "web-u1", ""},
		{"spec.hostname wins", "db-0", "db", false, false, "db-0", ""},
		{"setHostnameAsFQDN gives the fully qualified name", "db-0", "db", true, false, "db-0.db.default.svc.cluster.local", ""},
		{"setHostnameAsFQDN without a subdomain keeps the short name", "db-0", "", true, false, "db-0", ""},
		{"a hostNetwork pod gets no hostname", "db-0", "db", true, true, "", ""},
		{"a fully qualified name longer than 64 bytes is refused", strings.Repeat("h", 40), "db", true, false, "", "FQDN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEnv(t)
			pod := newPod("u1", "a")
			pod.Spec.Hostname, pod.Spec.Subdomain, pod.Spec.HostNetwork = c.hostname, c.subdom, c.hostNetwork
			pod.Spec.SetHostnameAsFQDN = &c.fqdn
			cfg, err := e.m.sandboxConfig(pod, 0)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one about %s", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Hostname != c.want {
				t.Errorf("hostname %q, want %q", cfg.Hostname, c.want)
			}
		})
	}
}

func TestParseResolvConfDropsRootDomainsAndMergesOptions(t *testing.T) {
	t.Parallel()
	got := parseResolvConf([]byte("search a.test. . b.test\noptions ndots:1 edns0\noptions ndots:3\n"))
	if !reflect.DeepEqual(got.Searches, []string{"a.test", "b.test"}) || !reflect.DeepEqual(got.Options, []string{"ndots:3", "edns0"}) {
		t.Errorf("parsed %v", got)
	}
}
