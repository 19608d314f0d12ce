package cri

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestSyncPodCreatesSandboxWithPodConfig(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.CgroupParent = "/nodekit-test"; c.RuntimeHandler = "runc" })
	pod := newPod("u1", "a")
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}, {ContainerPort: 9000}}
	pod.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"10.9.9.9"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("5")}}}
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	if len(e.rs.sandboxConfigs) != 1 {
		t.Fatalf("RunPodSandbox calls = %d, want 1", len(e.rs.sandboxConfigs))
	}
	cfg := e.rs.sandboxConfigs[0]
	logDir := filepath.Join(e.cfg.RootDir, "logs", "default_web-u1_u1")
	checks := []struct {
		what      string
		got, want any
	}{
		{"metadata", []any{cfg.Metadata.Name, cfg.Metadata.Namespace, cfg.Metadata.Uid, cfg.Metadata.Attempt}, []any{"web-u1", "default", "u1", uint32(0)}},
		{"hostname", cfg.Hostname, "web-u1"},
		{"log directory", cfg.LogDirectory, logDir},
		{"cgroup parent", cfg.Linux.CgroupParent, "/nodekit-test/kubepods/besteffort/podu1"},
		{"runtime handler", e.rs.sandboxHandlers[0], "runc"},
		{"namespaces", []runtimeapi.NamespaceMode{cfg.Linux.SecurityContext.NamespaceOptions.Network, cfg.Linux.SecurityContext.NamespaceOptions.Pid, cfg.Linux.SecurityContext.NamespaceOptions.Ipc},
			[]runtimeapi.NamespaceMode{runtimeapi.NamespaceMode_POD, runtimeapi.NamespaceMode_CONTAINER, runtimeapi.NamespaceMode_POD}},
		{"port mappings", len(cfg.PortMappings), 1},
		{"host port", cfg.PortMappings[0].HostPort, int32(8080)},
		{"dns servers", cfg.DnsConfig.Servers, []string{"10.0.0.53", "10.9.9.9"}},
		{"dns searches", cfg.DnsConfig.Searches, []string{"example.org"}},
		{"dns options", cfg.DnsConfig.Options, []string{"ndots:5"}},
		{"labels", cfg.Labels, map[string]string{"app": "web", noderuntime.LabelPodName: "web-u1", noderuntime.LabelPodNamespace: "default",
			noderuntime.LabelPodUID: "u1", noderuntime.LabelInstance: testInstance}},
		{"annotations", cfg.Annotations, map[string]string{"note": "hi"}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(logDir, "a")); err != nil {
		t.Errorf("container log directory not created: %v", err)
	}
}

func TestSyncPodSandboxNetworkAndDNSModes(t *testing.T) {
	cases := []struct {
		name         string
		mutate       func(*corev1.Pod)
		wantHostname string
		wantNetwork  runtimeapi.NamespaceMode
		wantServers  []string
	}{
		{"a host-network pod gets no hostname and the node's network", func(p *corev1.Pod) { p.Spec.HostNetwork = true },
			"", runtimeapi.NamespaceMode_NODE, []string{"10.0.0.53"}},
		{"dnsPolicy None ignores the host resolver", func(p *corev1.Pod) {
			p.Spec.DNSPolicy = corev1.DNSNone
			p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}}
		}, "web-u1", runtimeapi.NamespaceMode_POD, []string{"1.1.1.1"}},
		{"spec.hostname replaces the pod name", func(p *corev1.Pod) { p.Spec.Hostname = "box" },
			"box", runtimeapi.NamespaceMode_POD, []string{"10.0.0.53"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			pod := newPod("u1", "a")
			tt.mutate(pod)
			if err := e.sync(t, pod).Error(); err != nil {
				t.Fatalf("SyncPod: %v", err)
			}
			cfg := e.rs.sandboxConfigs[0]
			if cfg.Hostname != tt.wantHostname || cfg.Linux.SecurityContext.NamespaceOptions.Network != tt.wantNetwork ||
				!slices.Equal(cfg.DnsConfig.Servers, tt.wantServers) {
				t.Errorf("hostname %q network %v servers %v; want %q %v %v", cfg.Hostname,
					cfg.Linux.SecurityContext.NamespaceOptions.Network, cfg.DnsConfig.Servers, tt.wantHostname, tt.wantNetwork, tt.wantServers)
			}
		})
	}
}

func TestSyncPodContainerConfig(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.NodeIPs = []string{"192.0.2.1"} })
	pod := newPod("u1", "a")
	pod.Spec.NodeName = "node-a"
	pod.Spec.ServiceAccountName = "sa"
	c := &pod.Spec.Containers[0]
	c.WorkingDir = "/work"
	c.TTY = true
	c.Command = []string{"sh", "-c", "echo $(GREETING) $(MISSING) $$(GREETING)"}
	c.Args = []string{"$(POD_NAME)"}
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	c.Env = []corev1.EnvVar{
		{Name: "NAME", Value: "world"},
		{Name: "GREETING", Value: "hello $(NAME) $(LATER)"},
		{Name: "LATER", Value: "x"},
		{Name: "POD_NAME", ValueFrom: field("metadata.name")},
		{Name: "POD_NS", ValueFrom: field("metadata.namespace")},
		{Name: "POD_UID", ValueFrom: field("metadata.uid")},
		{Name: "APP", ValueFrom: field("metadata.labels['app']")},
		{Name: "NOTE", ValueFrom: field("metadata.annotations['note']")},
		{Name: "NODE", ValueFrom: field("spec.nodeName")},
		{Name: "SA", ValueFrom: field("spec.serviceAccountName")},
		{Name: "POD_IP", ValueFrom: field("status.podIP")},
		{Name: "HOST_IP", ValueFrom: field("status.hostIP")},
	}
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	cfg := e.rs.lastContainerConfig(t)
	env := map[string]string{}
	for _, kv := range cfg.Envs {
		env[kv.Key] = string(kv.Value)
	}
	wantEnv := map[string]string{
		"NAME": "world", "GREETING": "hello world $(LATER)", "LATER": "x", "POD_NAME": "web-u1", "POD_NS": "default",
		"POD_UID": "u1", "APP": "web", "NOTE": "hi", "NODE": "node-a", "SA": "sa", "POD_IP": "192.168.192.168", "HOST_IP": "192.0.2.1",
	}
	if !reflect.DeepEqual(env, wantEnv) {
		t.Errorf("env = %v\nwant %v", env, wantEnv)
	}
	if want := []string{"sh", "-c", "echo hello world $(LATER) $(MISSING) $(GREETING)"}; !slices.Equal(cfg.Command, want) {
		t.Errorf("command = %q, want %q", cfg.Command, want)
	}
	if !slices.Equal(cfg.Args, []string{"web-u1"}) {
		t.Errorf("args = %q", cfg.Args)
	}
	if cfg.LogPath != "a/0.log" || cfg.WorkingDir != "/work" || !cfg.Tty || cfg.Metadata.Attempt != 0 || cfg.Image.UserSpecifiedImage != testImage {
		t.Errorf("log path %q, working dir %q, tty %v, attempt %d, image %v", cfg.LogPath, cfg.WorkingDir, cfg.Tty, cfg.Metadata.Attempt, cfg.Image)
	}
	wantLabels := map[string]string{noderuntime.LabelPodName: "web-u1", noderuntime.LabelPodNamespace: "default",
		noderuntime.LabelPodUID: "u1", noderuntime.LabelContainerName: "a", noderuntime.LabelInstance: testInstance}
	if !reflect.DeepEqual(cfg.Labels, wantLabels) {
		t.Errorf("labels = %v", cfg.Labels)
	}
	a := cfg.Annotations
	if a[noderuntime.AnnotationContainerHash] != fmt.Sprintf("%x", hashContainer(c)) || a[noderuntime.AnnotationContainerRestartCount] != "0" ||
		a[noderuntime.AnnotationTerminationGracePeriod] != "30" {
		t.Errorf("annotations = %v", a)
	}
}

func TestSyncPodEnvErrorsAreConfigErrors(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*corev1.Container)
		want   string
	}{
		{"configMapKeyRef without an API server", func(c *corev1.Container) {
			c.Env = []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "k"}}}}
		}, "couldn't get configMap default/cm, no kubeClient defined"},
		{"secretKeyRef without an API server", func(c *corev1.Container) {
			c.Env = []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}}}
		}, "couldn't get secret default/s, no kubeClient defined"},
		{"envFrom without an API server", func(c *corev1.Container) {
			c.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}}
		}, "couldn't get configMap default/cm, no kubeClient defined"},
		{"an unknown fieldRef path", func(c *corev1.Container) {
			c.Env = []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.schedulerName"}}}}
		}, `unsupported fieldRef path "spec.schedulerName"`},
	}
	for _, tt := range cases {
		t.Run(tt.name+" fails with a config error", func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			pod := newPod("u1", "a")
			tt.mutate(&pod.Spec.Containers[0])
			r := e.sync(t, pod)
			step, ok := failedSteps(r)["StartContainer/a"]
			if !ok || !errors.Is(step.Err, noderuntime.ErrConfig) || !strings.Contains(step.Message, tt.want) {
				t.Fatalf("steps = %+v, want a StartContainer ErrConfig mentioning %q", r.Steps, tt.want)
			}
			if reason, _ := r.Waiting("a"); reason != "CreateContainerConfigError" {
				t.Errorf("Waiting reason = %q", reason)
			}
		})
	}
}

func TestSyncPodImagePullPolicies(t *testing.T) {
	cases := []struct {
		name       string
		image      string
		policy     corev1.PullPolicy
		pullErr    error
		wantPull   bool
		wantErr    error
		wantAction noderuntime.SyncAction
		wantMsg    string
	}{
		{name: "Always pulls even a present image", image: testImage, policy: corev1.PullAlways, wantPull: true},
		{name: "IfNotPresent uses a present image", image: testImage, policy: corev1.PullIfNotPresent},
		{name: "IfNotPresent pulls a missing image", image: "localhost/other:1", policy: corev1.PullIfNotPresent, wantPull: true},
		{name: "Never uses a present image", image: testImage, policy: corev1.PullNever},
		{name: "Never fails on a missing image", image: "localhost/other:1", policy: corev1.PullNever,
			wantErr: noderuntime.ErrImageNeverPull, wantAction: noderuntime.StartContainer,
			wantMsg: `Container image "localhost/other:1" is not present with pull policy of Never`},
		{name: "a failed pull is ErrImagePull", image: "localhost/other:1", policy: corev1.PullIfNotPresent,
			pullErr: errors.New("connection refused"), wantPull: true, wantErr: noderuntime.ErrImagePull, wantAction: noderuntime.PullImage,
			wantMsg: "connection refused"},
		{name: "an unset policy pulls a latest image", image: "localhost/other:latest", wantPull: true},
		{name: "an unset policy keeps a present tagged image", image: testImage},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			if tt.pullErr != nil {
				e.is.InjectError("PullImage", tt.pullErr)
			}
			pod := newPod("u1", "a")
			pod.Spec.Containers[0].Image, pod.Spec.Containers[0].ImagePullPolicy = tt.image, tt.policy
			r := e.sync(t, pod)
			if pulled := slices.Contains(e.is.Called, "PullImage"); pulled != tt.wantPull {
				t.Errorf("pulled = %v, want %v", pulled, tt.wantPull)
			}
			failed := failedSteps(r)
			if tt.wantErr == nil {
				if len(failed) != 0 {
					t.Fatalf("failed steps: %+v", failed)
				}
				return
			}
			step, ok := failed[string(tt.wantAction)+"/a"]
			if !ok || !errors.Is(step.Err, tt.wantErr) || !strings.Contains(step.Message, tt.wantMsg) {
				t.Fatalf("steps = %+v, want %s failing with %v and %q", r.Steps, tt.wantAction, tt.wantErr, tt.wantMsg)
			}
			if len(e.rs.containerConfigs) != 0 {
				t.Error("a container was created although its image is missing")
			}
		})
	}
}

func TestSyncPodIsIdempotent(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "a", "b")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatalf("first SyncPod: %v", err)
	}
	r := e.sync(t, pod)
	if len(r.Steps) != 0 || r.Error() != nil {
		t.Fatalf("second SyncPod took steps %+v", r.Steps)
	}
	if len(e.rs.sandboxConfigs) != 1 || len(e.rs.containerConfigs) != 2 {
		t.Errorf("sandboxes %d containers %d, want 1 and 2", len(e.rs.sandboxConfigs), len(e.rs.containerConfigs))
	}
}

func TestSyncPodSpecChangeRestartsContainer(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "a")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	oldID := e.containerIDOf(t, pod, "a")
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "V", Value: "2"}}
	r := e.sync(t, pod)
	if r.Error() != nil || len(r.Steps) != 2 || r.Steps[0].Action != noderuntime.KillContainer || r.Steps[1].Action != noderuntime.StartContainer {
		t.Fatalf("steps = %+v", r.Steps)
	}
	if !strings.Contains(r.Steps[0].Message, "spec hash changed") {
		t.Errorf("kill message = %q", r.Steps[0].Message)
	}
	st := e.status(t, pod)
	if got := st.FindContainerStatusByName("a"); got.ID.ID == oldID || got.RestartCount != 1 || got.Hash != hashContainer(&pod.Spec.Containers[0]) {
		t.Errorf("new container %+v", got)
	}
}

func TestSyncPodRecreatesDeadSandbox(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "a")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	st := e.status(t, pod)
	e.rs.setSandboxState(t, st.SandboxStatuses[0].Id, runtimeapi.PodSandboxState_SANDBOX_NOTREADY)
	e.rs.setContainer(t, st.ContainerStatuses[0].ID.ID, runtimeapi.ContainerState_CONTAINER_EXITED, 137, e.clk.Now())
	r := e.sync(t, pod)
	if r.Error() != nil {
		t.Fatalf("SyncPod: %v", r.Error())
	}
	var actions []noderuntime.SyncAction
	for _, s := range r.Steps {
		actions = append(actions, s.Action)
	}
	want := []noderuntime.SyncAction{noderuntime.KillPodSandbox, noderuntime.CreatePodSandbox, noderuntime.StartContainer}
	if !slices.Equal(actions, want) {
		t.Fatalf("actions = %v, want %v", actions, want)
	}
	if got := e.rs.sandboxConfigs[1].Metadata.Attempt; got != 1 {
		t.Errorf("new sandbox attempt = %d, want 1", got)
	}
	if got := e.rs.lastContainerConfig(t).Metadata.Attempt; got != 1 {
		t.Errorf("restarted container attempt = %d, want 1", got)
	}
}

func TestSyncPodReportsSandboxFailure(t *testing.T) {
	e := newTestEnv(t)
	e.rs.InjectError("RunPodSandbox", errors.New("cni failed"))
	r := e.sync(t, newPod("u1", "a"))
	step, ok := failedSteps(r)["CreatePodSandbox/web-u1_default(u1)"]
	if !ok || !errors.Is(step.Err, noderuntime.ErrCreatePodSandbox) || !strings.Contains(step.Message, "cni failed") {
		t.Fatalf("steps = %+v", r.Steps)
	}
	if len(e.rs.containerConfigs) != 0 {
		t.Error("containers were created without a sandbox")
	}
}

func TestSyncPodContinuesRestartCountFromLogs(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "a")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.cfg.RootDir, "logs", "default_web-u1_u1", "a")
	for _, f := range []string{"0.log", "3.log", "junk.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	id := e.containerIDOf(t, pod, "a")
	if err := e.rs.RemoveContainer(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	if got := e.status(t, pod).FindContainerStatusByName("a").RestartCount; got != 4 {
		t.Errorf("restart count = %d, want 4 (after 3.log)", got)
	}
}
