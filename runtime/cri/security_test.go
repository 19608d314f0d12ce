package cri

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// setImageUser makes the fake image run as uid (when not nil) or username.
func (e *testEnv) setImageUser(uid *int64, username string) {
	e.is.Lock()
	defer e.is.Unlock()
	img := e.is.Images[testImage]
	img.Uid, img.Username = nil, username
	if uid != nil {
		img.Uid = &runtimeapi.Int64Value{Value: *uid}
	}
}

func TestContainerSecurityContextSentToTheRuntime(t *testing.T) {
	t.Parallel()
	type check func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext)
	cases := []struct {
		name   string
		podSC  *corev1.PodSecurityContext
		sc     *corev1.SecurityContext
		cfg    func(*Config)
		checks []check
	}{
		{"the container's user and group win over the pod's, and groups come from fsGroup then supplementalGroups",
			&corev1.PodSecurityContext{RunAsUser: ptr(int64(1000)), RunAsGroup: ptr(int64(1000)), FSGroup: ptr(int64(2000)), SupplementalGroups: []int64{3000, 3001}},
			&corev1.SecurityContext{RunAsUser: ptr(int64(1001))}, nil,
			[]check{func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.GetRunAsUser().GetValue() != 1001 || sc.GetRunAsGroup().GetValue() != 1000 {
					t.Errorf("user %v group %v, want 1001 and 1000", sc.GetRunAsUser(), sc.GetRunAsGroup())
				}
				if !reflect.DeepEqual(sc.GetSupplementalGroups(), []int64{2000, 3000, 3001}) {
					t.Errorf("supplemental groups %v", sc.GetSupplementalGroups())
				}
			}}},
		{"capabilities, privileged, read-only root and no_new_privs pass through",
			nil, &corev1.SecurityContext{Privileged: ptr(true), ReadOnlyRootFilesystem: ptr(true), AllowPrivilegeEscalation: ptr(false),
				Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}, Drop: []corev1.Capability{"CHOWN", "NET_RAW"}}}, nil,
			[]check{func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if !sc.GetPrivileged() || !sc.GetReadonlyRootfs() || !sc.GetNoNewPrivs() {
					t.Errorf("privileged %v readonly %v noNewPrivs %v, want all true", sc.GetPrivileged(), sc.GetReadonlyRootfs(), sc.GetNoNewPrivs())
				}
				caps := sc.GetCapabilities()
				if !reflect.DeepEqual(caps.GetAddCapabilities(), []string{"NET_ADMIN"}) || !reflect.DeepEqual(caps.GetDropCapabilities(), []string{"CHOWN", "NET_RAW"}) {
					t.Errorf("capabilities %v", caps)
				}
			}}},
		{"without a runAsUser the image's uid is sent and no seccomp profile means Unconfined", nil, nil, nil,
			[]check{func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.GetRunAsUser() == nil || sc.GetRunAsUser().GetValue() != 0 {
					t.Errorf("runAsUser %v, want the image's 0", sc.GetRunAsUser())
				}
				if sc.GetSeccomp().GetProfileType() != runtimeapi.SecurityProfile_Unconfined || sc.GetNoNewPrivs() || sc.GetCapabilities() != nil {
					t.Errorf("seccomp %v noNewPrivs %v caps %v", sc.GetSeccomp(), sc.GetNoNewPrivs(), sc.GetCapabilities())
				}
				if len(sc.GetMaskedPaths()) == 0 || !reflect.DeepEqual(sc.GetReadonlyPaths(), defaultReadonlyPaths()) {
					t.Errorf("masked %v readonly %v, want the defaults", sc.GetMaskedPaths(), sc.GetReadonlyPaths())
				}
			}}},
		{"SeccompDefault makes RuntimeDefault the default", nil, nil, func(c *Config) { c.SeccompDefault = true },
			[]check{func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.GetSeccomp().GetProfileType() != runtimeapi.SecurityProfile_RuntimeDefault {
					t.Errorf("seccomp %v, want RuntimeDefault", sc.GetSeccomp())
				}
			}}},
		{"the container's seccomp profile wins and Localhost is under the profile root",
			&corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			&corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr("audit.json")}},
			func(c *Config) { c.SeccompProfileRoot = "/etc/nodekit/seccomp" },
			[]check{func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if p := sc.GetSeccomp(); p.GetProfileType() != runtimeapi.SecurityProfile_Localhost || p.GetLocalhostRef() != "/etc/nodekit/seccomp/audit.json" {
					t.Errorf("seccomp %v", p)
				}
			}}},
		{"the pod's seccomp profile applies to a container without one and its namespaces follow the pod",
			&corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}, nil, nil,
			[]check{func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.GetSeccomp().GetProfileType() != runtimeapi.SecurityProfile_RuntimeDefault {
					t.Errorf("seccomp %v, want RuntimeDefault", sc.GetSeccomp())
				}
				if sc.GetNamespaceOptions().GetNetwork() != runtimeapi.NamespaceMode_NODE || sc.GetNamespaceOptions().GetPid() != runtimeapi.NamespaceMode_NODE {
					t.Errorf("namespaces %v, want the node's network and pid", sc.GetNamespaceOptions())
				}
			}}},
		{"an Unmasked proc mount sends empty path lists and AppArmor is passed on",
			nil, &corev1.SecurityContext{ProcMount: ptr(corev1.UnmaskedProcMount), AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}}, nil,
			[]check{func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.GetMaskedPaths() == nil || len(sc.GetMaskedPaths())+len(sc.GetReadonlyPaths()) != 0 {
					t.Errorf("masked %v readonly %v, want empty non-nil lists", sc.GetMaskedPaths(), sc.GetReadonlyPaths())
				}
				if sc.GetApparmor().GetProfileType() != runtimeapi.SecurityProfile_RuntimeDefault || sc.GetApparmorProfile() != "runtime/default" {
					t.Errorf("apparmor %v %q", sc.GetApparmor(), sc.GetApparmorProfile())
				}
			}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEnv(t, func(cfg *Config) {
				if c.cfg != nil {
					c.cfg(cfg)
				}
			})
			pod := newPod("u1", "a")
			pod.Spec.SecurityContext = c.podSC
			pod.Spec.Containers[0].SecurityContext = c.sc
			if strings.Contains(c.name, "namespaces") {
				pod.Spec.HostNetwork, pod.Spec.HostPID = true, true
			}
			if err := e.sync(t, pod).Error(); err != nil {
				t.Fatalf("SyncPod: %v", err)
			}
			sc := e.rs.lastContainerConfig(t).GetLinux().GetSecurityContext()
			for _, chk := range c.checks {
				chk(t, sc)
			}
		})
	}
}

func TestRunAsNonRootIsCheckedAgainstTheImageUser(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		imageUID  *int64
		imageName string
		runAsUser *int64
		wantErr   string
		wantUser  string
	}{
		{"an image without a user runs as root and is refused", nil, "", nil, "container has runAsNonRoot and image will run as root", ""},
		{"an image with uid 0 is refused", ptr(int64(0)), "", nil, "container has runAsNonRoot and image will run as root", ""},
		{"an image with a non-numeric user cannot be checked", nil, "nobody", nil, "image has non-numeric user (nobody)", ""},
		{"an image with a non-root uid runs as that uid", ptr(int64(65534)), "", nil, "", "65534"},
		{"runAsUser 0 breaks the policy whatever the image", ptr(int64(1000)), "", ptr(int64(0)), "runAsUser breaks non-root policy", ""},
		{"a non-root runAsUser overrides a root image", nil, "", ptr(int64(1000)), "", "1000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.setImageUser(c.imageUID, c.imageName)
			pod := newPod("u1", "a")
			pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr(true)}
			pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsUser: c.runAsUser}
			r := e.sync(t, pod)
			step, failed := failedSteps(r)["StartContainer/a"]
			if c.wantErr == "" {
				if failed {
					t.Fatalf("start failed: %v", step.Err)
				}
				if got := e.rs.lastContainerConfig(t).GetLinux().GetSecurityContext().GetRunAsUser().GetValue(); c.wantUser != "" && strconv.FormatInt(got, 10) != c.wantUser {
					t.Errorf("runAsUser = %d, want %s", got, c.wantUser)
				}
				return
			}
			if !failed || !errors.Is(step.Err, noderuntime.ErrConfig) || !strings.Contains(step.Message, c.wantErr) {
				t.Fatalf("step %+v, want a CreateContainerConfigError saying %q", step, c.wantErr)
			}
			if reason, _ := r.Waiting("a"); reason != "CreateContainerConfigError" {
				t.Errorf("waiting reason %q, want CreateContainerConfigError", reason)
			}
			if len(e.rs.containerConfigs) != 0 {
				t.Error("a container was created")
			}
		})
	}
}

func TestSandboxSecurityContextAndSysctls(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	pod := newPod("u1", "a")
	policy := corev1.SupplementalGroupsPolicyStrict
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{
		RunAsUser: ptr(int64(1000)), RunAsGroup: ptr(int64(3000)), FSGroup: ptr(int64(2000)), SupplementalGroups: []int64{4000},
		SupplementalGroupsPolicy: &policy, SELinuxOptions: &corev1.SELinuxOptions{Level: "s0:c1"},
		Sysctls: []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "0"}},
	}
	pod.Spec.HostIPC = true
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	linux := e.rs.sandboxConfigs[0].GetLinux()
	sc := linux.GetSecurityContext()
	if sc.GetRunAsUser().GetValue() != 1000 || sc.GetRunAsGroup().GetValue() != 3000 ||
		!reflect.DeepEqual(sc.GetSupplementalGroups(), []int64{2000, 4000}) ||
		sc.GetSupplementalGroupsPolicy() != runtimeapi.SupplementalGroupsPolicy_Strict || sc.GetSelinuxOptions().GetLevel() != "s0:c1" {
		t.Errorf("sandbox security context %v", sc)
	}
	if sc.GetSeccomp().GetProfileType() != runtimeapi.SecurityProfile_RuntimeDefault {
		t.Errorf("sandbox seccomp %v, want RuntimeDefault as the kubelet sends", sc.GetSeccomp())
	}
	if sc.GetNamespaceOptions().GetIpc() != runtimeapi.NamespaceMode_NODE {
		t.Errorf("sandbox ipc namespace %v, want NODE", sc.GetNamespaceOptions().GetIpc())
	}
	if !reflect.DeepEqual(linux.GetSysctls(), map[string]string{"net.ipv4.ip_unprivileged_port_start": "0"}) {
		t.Errorf("sysctls %v", linux.GetSysctls())
	}
	csc := e.rs.lastContainerConfig(t).GetLinux().GetSecurityContext()
	if csc.GetSupplementalGroupsPolicy() != runtimeapi.SupplementalGroupsPolicy_Strict {
		t.Errorf("container supplementalGroupsPolicy %v, want Strict", csc.GetSupplementalGroupsPolicy())
	}
}

func TestALocalhostSeccompProfileWithoutAName(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	pod := newPod("u1", "a")
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}}
	step, ok := failedSteps(e.sync(t, pod))["StartContainer/a"]
	if !ok || !errors.Is(step.Err, noderuntime.ErrConfig) || !strings.Contains(step.Message, "localhostProfile must be set") {
		t.Fatalf("step %+v, want a config error about localhostProfile", step)
	}
}
