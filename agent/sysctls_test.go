package agent

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/go-logr/logr/testr"

	"github.com/nodekit/nodekit/podworkers"
	"github.com/nodekit/nodekit/sources"
)

// withSysctls is a static pod that sets the sysctls name=value pairs.
func withSysctls(uid string, hostNet, hostIPC bool, names ...string) *corev1.Pod {
	pod := staticPod(uid, uid)
	pod.Spec.HostNetwork, pod.Spec.HostIPC = hostNet, hostIPC
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{}
	for _, n := range names {
		pod.Spec.SecurityContext.Sysctls = append(pod.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: n, Value: "1"})
	}
	return pod
}

func TestSysctlAdmission(t *testing.T) {
	cases := []struct {
		name    string
		unsafe  []string
		kernel  string // "" for an unreadable version
		pod     *corev1.Pod
		wantMsg string // "" for admitted
	}{
		{"a safe sysctl is admitted", nil, "6.1.0",
			withSysctls("a", false, false, "net.ipv4.ip_local_port_range", "kernel.shm_rmid_forced"), ""},
		{"the sysctls made safe in 1.29 are admitted", nil, "6.1.0",
			withSysctls("a", false, false, "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"), ""},
		{"tcp_rmem is safe on a kernel that namespaces it", nil, "4.15.0",
			withSysctls("a", false, false, "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.ip_local_reserved_ports"), ""},
		{"tcp_rmem is unsafe on an older kernel", nil, "4.14.0",
			withSysctls("a", false, false, "net.ipv4.tcp_rmem"), `forbidden sysctl: "net.ipv4.tcp_rmem" not allowlisted`},
		{"an unreadable kernel version leaves the legacy set", nil, "",
			withSysctls("a", false, false, "net.ipv4.tcp_wmem"), `forbidden sysctl: "net.ipv4.tcp_wmem" not allowlisted`},
		{"an unsafe sysctl is SysctlForbidden", nil, "6.1.0",
			withSysctls("a", false, false, "kernel.msgmax"), `forbidden sysctl: "kernel.msgmax" not allowlisted`},
		{"an unsafe sysctl matched by an allowed pattern is admitted", []string{"kernel.msg*", "net.core.somaxconn"}, "6.1.0",
			withSysctls("a", false, false, "kernel.msgmax", "net.core.somaxconn"), ""},
		{"a slash-separated name is normalized", []string{"net.ipv4.conf.all.rp_filter"}, "6.1.0",
			withSysctls("a", false, false, "net/ipv4/conf/all/rp_filter"), ""},
		{"a net sysctl is refused with hostNetwork", nil, "6.1.0",
			withSysctls("a", true, false, "net.ipv4.ip_local_port_range"), `forbidden sysctl: "net.ipv4.ip_local_port_range" not allowed with host Net enabled`},
		{"an allowed ipc prefix is refused with hostIPC", []string{"kernel.shm*"}, "6.1.0",
			withSysctls("a", false, true, "kernel.shmmax"), `forbidden sysctl: "kernel.shmmax" not allowed with host IPC enabled`},
		{"an ipc sysctl is fine with hostNetwork", nil, "6.1.0",
			withSysctls("a", true, false, "kernel.shm_rmid_forced"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lt := newLoopTest(t, Config{AllowedUnsafeSysctls: c.unsafe})
			h := NewSysctlAdmission(c.unsafe, testr.New(t))
			lt.agent.admit = h
			h.kernelVersion = func() (*version.Version, error) {
				if c.kernel == "" {
					return nil, errors.New("no /proc")
				}
				return version.MustParseGeneric(c.kernel), nil
			}
			lt.start()
			lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{c.pod}}
			if c.wantMsg == "" {
				if call := lt.nextCall(); call.UpdateType != podworkers.SyncPodCreate || call.Pod.UID != c.pod.UID {
					t.Fatalf("call = %s %v, want create of %s", call.UpdateType, call.Pod.UID, c.pod.UID)
				}
				return
			}
			lt.noCall()
			st, ok := lt.agent.statuses.GetPodStatus(types.UID(c.pod.UID))
			if !ok || st.Phase != corev1.PodFailed || st.Reason != "SysctlForbidden" || st.Message != "Pod was rejected: "+c.wantMsg {
				t.Fatalf("rejected pod status = %+v, want SysctlForbidden: %s", st, c.wantMsg)
			}
		})
	}
}

func TestAllowedUnsafeSysctlsAreValidated(t *testing.T) {
	cases := []struct {
		patterns []string
		wantErr  bool
	}{
		{[]string{"net.*", "kernel.shm*", "kernel.sem", "fs.mqueue.*", "net.ipv4.conf.eth0/100.rp_filter"}, false},
		{[]string{"vm.swappiness"}, true}, // not namespaced
		{[]string{"kernel.*"}, true},      // not all of kernel is namespaced
		{[]string{"Net.Core"}, true},
		{[]string{""}, true},
		{[]string{"net..core"}, true},
	}
	for _, c := range cases {
		err := (Config{NodeName: "n", AllowedUnsafeSysctls: c.patterns}).Validate()
		if (err != nil) != c.wantErr {
			t.Errorf("Validate(%q) = %v, want error %v", c.patterns, err, c.wantErr)
		}
	}
}
