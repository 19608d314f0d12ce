package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit"
)

const kcHeader = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

// parseKubelet parses args and the config file as `nodekit run` does.
func parseKubelet(t *testing.T, file string, args ...string) (*options, []string, error) {
	t.Helper()
	o := &options{}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	o.addFlags(fs)
	if file != "" {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--config", path)
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	warnings, err := o.loadConfigFile(fs)
	if err != nil {
		return nil, nil, err
	}
	return o, warnings, o.complete()
}

func kubeletConfig(t *testing.T, file string, args ...string) (nodekit.Config, []string) {
	t.Helper()
	o, warnings, err := parseKubelet(t, file, args...)
	if err != nil {
		t.Fatal(err)
	}
	return o.config(), warnings
}

func TestKubeadmFileStartsWithWarningsOnly(t *testing.T) {
	data, err := os.ReadFile("testdata/kubeadm-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, warnings := kubeletConfig(t, string(data), "--kubeconfig", "/etc/kubernetes/kubelet.conf", "--node-name", "edge-1")
	var fields []string
	for _, w := range warnings {
		fields = append(fields, strings.Fields(w)[2])
	}
	want := []string{"healthzBindAddress", "healthzPort"}
	if !slices.Equal(fields, want) {
		t.Errorf("warnings name %q, want %q:\n%s", fields, want, strings.Join(warnings, "\n"))
	}
	if cfg.Manifests != "/etc/kubernetes/manifests" || cfg.RuntimeEndpoint != defaultContainerRuntimeEndpoint ||
		cfg.Server.ClientCAFile != "/etc/kubernetes/pki/ca.crt" || cfg.Server.AnonymousAuth || cfg.Server.Port != 0 ||
		cfg.Server.SecurePort != 10250 || cfg.CRI.CgroupDriver != "systemd" || cfg.CRI.ClusterDomain != "cluster.local" ||
		!slices.Equal(cfg.CRI.ClusterDNS, []string{"10.96.0.10"}) || cfg.CRI.ResolvConf != "/run/systemd/resolve/resolv.conf" {
		t.Errorf("kubeadm file not applied: %+v", cfg)
	}
	// kubeadm's 0s durations are unset: nodekit's defaults stay.
	if cfg.FileCheckPeriod.String() != "20s" || cfg.RuntimeRequestTimeout.String() != "2m0s" || cfg.PodWorkers.ResyncInterval != 0 {
		t.Errorf("zero durations were applied: fileCheck %s runtimeRequestTimeout %s sync %s", cfg.FileCheckPeriod, cfg.RuntimeRequestTimeout, cfg.PodWorkers.ResyncInterval)
	}
	cfg, err = cfg.Complete()
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("the kubeadm file's Config does not validate: %v", err)
	}
}

func TestUnknownFieldsAreNamedOnce(t *testing.T) {
	_, warnings, err := parseKubelet(t, kcHeader+"maxPods: 30\nfooBar: 1\nauthentication:\n  x509:\n    clientCAFile: /ca.crt\n    bogus: true\nfeatureGates:\n  Foo: true\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"KubeletConfiguration field authentication.x509.bogus is unknown and ignored",
		"KubeletConfiguration field fooBar is unknown and ignored",
		"KubeletConfiguration field featureGates is not supported by nodekit and is ignored: nodekit has no feature gates",
	}
	if !slices.Equal(warnings, want) {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
}

func TestAFieldGivenTwiceIsNamed(t *testing.T) {
	o, warnings, err := parseKubelet(t, kcHeader+"maxPods: 1\nmaxPods: 2\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `"maxPods"`) {
		t.Errorf("warnings %q, want one naming maxPods", warnings)
	}
	if got := o.config().Agent.MaxPods; got != 2 {
		t.Errorf("maxPods %d, want the last value, 2, as the kubelet's lenient decoding", got)
	}
}

func TestAFileWithoutApiVersionIsTheDeprecatedFormat(t *testing.T) {
	o, warnings, err := parseKubelet(t, "maxPods: 20\nruntimeEndpoint: unix:///x.sock\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "deprecated") {
		t.Errorf("warnings %q, want one about the deprecated format", warnings)
	}
	if cfg := o.config(); cfg.Agent.MaxPods != 20 || cfg.RuntimeEndpoint != "unix:///x.sock" || cfg.Server.Port != 10255 {
		t.Errorf("deprecated file not applied as before: %+v", cfg)
	}
}

func TestConfigFilesNodekitRefuses(t *testing.T) {
	tests := []struct{ name, file, wantErr string }{
		{"another kind", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: CredentialProviderConfig\n", "nodekit reads apiVersion"},
		{"another version", "apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n", "nodekit reads apiVersion"},
		{"a kind without apiVersion", "kind: KubeletConfiguration\n", "nodekit reads apiVersion"},
		{"a field of the wrong type", kcHeader + "maxPods: many\n", "decode KubeletConfiguration"},
		{"webhook authentication turned off", kcHeader + "authentication:\n  webhook:\n    enabled: false\n", "authentication.webhook.enabled"},
		{"AlwaysAllow authorization", kcHeader + "authorization:\n  mode: AlwaysAllow\n", "authorization.mode"},
		{"an unknown cgroup driver", kcHeader + "cgroupDriver: cgroupv3\n", "cgroupDriver"},
		{"JSON logs", kcHeader + "logging:\n  format: json\n", "logging.format"},
		{"a pod pids limit below -1", kcHeader + "podPidsLimit: -2\n", "podPidsLimit"},
		{"no host resolver file", kcHeader + "resolvConf: \"\"\n", "resolvConf"},
		{"no debugging handlers", kcHeader + "enableDebuggingHandlers: false\n", "enableDebuggingHandlers"},
		{"no node registration", kcHeader + "registerNode: false\n", "registerNode"},
		{"a list", "- a\n", "object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseKubelet(t, tt.file)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestFlagsOverrideTheKubeletConfiguration(t *testing.T) {
	cfg, _ := kubeletConfig(t, kcHeader+"maxPods: 30\nstaticPodPath: /from-file\nreadOnlyPort: 10255\n",
		"--max-pods", "40", "--pod-manifest-path", "/from-flag", "--port", "9999")
	if cfg.Agent.MaxPods != 40 || cfg.Manifests != "/from-flag" || cfg.Server.Port != 9999 {
		t.Fatalf("maxPods %d manifests %q port %d: want the flags' values", cfg.Agent.MaxPods, cfg.Manifests, cfg.Server.Port)
	}
}

func TestKubeletDefaultsWhereNodekitsDiffer(t *testing.T) {
	cfg, warnings := kubeletConfig(t, kcHeader)
	if len(warnings) != 0 {
		t.Errorf("an empty file warns: %q", warnings)
	}
	if cfg.Server.Port != 0 || cfg.RuntimeEndpoint != defaultContainerRuntimeEndpoint || !*cfg.CRI.SerializeImagePulls {
		t.Errorf("readOnlyPort %d endpoint %q serialize %v: want the kubelet's 0, containerd's socket and true", cfg.Server.Port, cfg.RuntimeEndpoint, *cfg.CRI.SerializeImagePulls)
	}
	cfg, _ = kubeletConfig(t, kcHeader+"maxParallelImagePulls: 3\n")
	if *cfg.CRI.SerializeImagePulls || cfg.CRI.MaxParallelImagePulls != 3 {
		t.Errorf("maxParallelImagePulls 3 alone: serialize %v max %d, want false and 3 as the kubelet", *cfg.CRI.SerializeImagePulls, cfg.CRI.MaxParallelImagePulls)
	}
	cfg, _ = kubeletConfig(t, kcHeader+"nodeStatusUpdateFrequency: 4s\n")
	if cfg.NodeStatus.StatusUpdateFrequency.String() != "4s" || cfg.NodeStatus.StatusReportFrequency.String() != "4s" {
		t.Errorf("update %s report %s: the report frequency follows an update frequency set alone", cfg.NodeStatus.StatusUpdateFrequency, cfg.NodeStatus.StatusReportFrequency)
	}
}

func TestAFilesEvictionHardReplacesTheDefaults(t *testing.T) {
	cfg, _ := kubeletConfig(t, kcHeader+"evictionHard:\n  memory.available: 200Mi\n")
	want := "imagefs.available<0%,imagefs.inodesFree<0%,memory.available<200Mi,nodefs.available<0%,nodefs.inodesFree<0%"
	if cfg.EvictionHard != want {
		t.Errorf("evictionHard %q, want %q (the signals not named off, as the kubelet)", cfg.EvictionHard, want)
	}
	cfg, _ = kubeletConfig(t, kcHeader+"mergeDefaultEvictionSettings: true\nevictionHard:\n  memory.available: 200Mi\n")
	if cfg.EvictionHard != "memory.available<200Mi" {
		t.Errorf("evictionHard %q with mergeDefaultEvictionSettings, want the defaults kept for the others", cfg.EvictionHard)
	}
}

func TestKubeletNamedFlags(t *testing.T) {
	cfg, _ := kubeletConfig(t, "", "--hostname-override", " Edge-2 ", "--node-labels", "example.com/pool=a,kubelet.kubernetes.io/edge=,kubernetes.io/arch=amd64",
		"--register-with-taints", "example.com/edge=true:NoSchedule,dedicated:NoExecute", "--pod-manifest-path", "/etc/kubernetes/manifests")
	if cfg.NodeName != "edge-2" || cfg.Manifests != "/etc/kubernetes/manifests" {
		t.Errorf("node name %q manifests %q", cfg.NodeName, cfg.Manifests)
	}
	if fmt.Sprint(cfg.NodeStatus.Labels) != "map[example.com/pool:a kubelet.kubernetes.io/edge: kubernetes.io/arch:amd64]" {
		t.Errorf("labels %v", cfg.NodeStatus.Labels)
	}
	want := []corev1.Taint{{Key: "example.com/edge", Value: "true", Effect: corev1.TaintEffectNoSchedule}, {Key: "dedicated", Effect: corev1.TaintEffectNoExecute}}
	if fmt.Sprint(cfg.NodeStatus.Taints) != fmt.Sprint(want) {
		t.Errorf("taints %v, want %v", cfg.NodeStatus.Taints, want)
	}
}

func TestACommandLineAliasWinsOverTheDeprecatedFile(t *testing.T) {
	cfg, _ := kubeletConfig(t, "manifests: /from-file\nnodeName: file-node\n", "--pod-manifest-path", "/from-flag", "--hostname-override", "flag-node")
	if cfg.Manifests != "/from-flag" || cfg.NodeName != "flag-node" {
		t.Errorf("manifests %q node %q: want the command line's", cfg.Manifests, cfg.NodeName)
	}
}

func TestKubeletNamedFlagsNodekitRefuses(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"a kubernetes.io label a kubelet may not set", []string{"--node-labels", "kubernetes.io/role=edge"}, "kubernetes.io/role"},
		{"a node role, which the kubelet may not set on its Node", []string{"--node-labels", "node-role.kubernetes.io/edge="}, "node-role.kubernetes.io/edge"},
		{"a k8s.io label a kubelet may not set", []string{"--node-labels", "team.k8s.io/x=y"}, "team.k8s.io/x"},
		{"a label value that is not one", []string{"--node-labels", "example.com/a=b c"}, "value"},
		{"a taint without an effect", []string{"--register-with-taints", "a=b"}, "key=value:Effect"},
		{"a taint with an unknown effect", []string{"--register-with-taints", "a=b:Sometimes"}, "effect"},
		{"two names for the node", []string{"--hostname-override", "a", "--node-name", "b"}, "differ"},
		{"two manifest directories", []string{"--pod-manifest-path", "/a", "--manifests", "/b"}, "differ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseKubelet(t, "", tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestNodeLabelsTheKubeletAllows(t *testing.T) {
	for _, l := range []string{"kubelet.kubernetes.io/x=y", "node.kubernetes.io/instance-type=m5", "topology.kubernetes.io/zone=z1", "a.node.kubernetes.io/b=c", "example.com/kubernetes.io=x"} {
		if _, _, err := parseKubelet(t, "", "--node-labels", l); err != nil {
			t.Errorf("--node-labels %s: %v", l, err)
		}
	}
}

func TestVersionIsTheKubeletsWithNodekitBuildMetadata(t *testing.T) {
	var out strings.Builder
	root := newRootCommand()
	root.SetOut(&out)
	root.SetArgs([]string{"run", "--version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "Kubernetes v1.37.2+nodekit\n" {
		t.Errorf("run --version printed %q", got)
	}
	out.Reset()
	root = newRootCommand()
	root.SetOut(&out)
	root.SetArgs([]string{"--version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "Kubernetes v1.37.2+nodekit\n" {
		t.Errorf("--version printed %q", got)
	}
}

func FuzzDecodeKubeletConfig(f *testing.F) {
	kubeadm, err := os.ReadFile("testdata/kubeadm-config.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(kubeadm)
	f.Add([]byte(kcHeader + "evictionHard:\n  memory.available: 1Gi\nregisterWithTaints:\n- key: a\n  effect: NoSchedule\n"))
	f.Add([]byte(kcHeader + "authentication:\n  x509:\n    bogus: 1\nmaxPods: 1\nmaxPods: 2\n"))
	f.Add([]byte("maxPods: 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kc, err := decodeKubeletConfig(data)
		if err != nil {
			return
		}
		for _, w := range kc.warnings() {
			if w == "" {
				t.Fatal("an empty warning")
			}
		}
		if kc.check() != nil {
			return
		}
		o := &options{}
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		o.addFlags(fs)
		for _, fv := range kc.flagValues() {
			if fs.Lookup(fv.flag) == nil {
				t.Fatalf("field %s maps to flag --%s, which does not exist", fv.field, fv.flag)
			}
			_ = fs.Set(fv.flag, fv.value) // a value the flag refuses is an error, not a panic
		}
		o.kubelet = kc
		_ = o.config()
	})
}

func TestRootWithoutArgumentsPrintsHelp(t *testing.T) {
	var out strings.Builder
	root := newRootCommand()
	root.SetOut(&out)
	root.SetArgs([]string{})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "runtime-sim") || !strings.Contains(got, "--version") {
		t.Errorf("help without arguments lacks the commands or --version:\n%s", got)
	}
	root = newRootCommand()
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"bogus"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("an unknown command: err %v, want one naming it", err)
	}
}
