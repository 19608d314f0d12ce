package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/nodekit/nodekit"
)

// fieldCases is one case per supported KubeletConfiguration field: the
// YAML that sets it (after the header) and what it must set in the
// Config. TestEverySupportedFieldHasACase keeps it complete.
var fieldCases = []struct {
	field string
	yaml  string
	got   func(c nodekit.Config) any
	want  any
}{
	{"rotateCertificates", "rotateCertificates: true\n", func(c nodekit.Config) any { return c.Certificates.RotateCertificates }, true},
	{"staticPodURL", "staticPodURL: http://192.0.2.7/pods\n", func(c nodekit.Config) any { return c.HTTPSource.URL }, "http://192.0.2.7/pods"},
	{"staticPodURLHeader", "staticPodURL: http://192.0.2.7/pods\nstaticPodURLHeader:\n  X-Node: [a, b]\n", func(c nodekit.Config) any { return fmt.Sprint(c.HTTPSource.Header["X-Node"]) }, "[a b]"},
	{"httpCheckFrequency", "httpCheckFrequency: 7s\n", func(c nodekit.Config) any { return c.HTTPSource.CheckPeriod }, 7 * time.Second},
	{"shutdownGracePeriod", "shutdownGracePeriod: 30s\n", func(c nodekit.Config) any { return c.Shutdown.GracePeriod }, 30 * time.Second},
	{"shutdownGracePeriodCriticalPods", "shutdownGracePeriod: 30s\nshutdownGracePeriodCriticalPods: 10s\n", func(c nodekit.Config) any { return c.Shutdown.GracePeriodCriticalPods }, 10 * time.Second},
	{"enableServer", "enableServer: false\nreadOnlyPort: 10255\n", func(c nodekit.Config) any { return [2]int{c.Server.Port, c.Server.SecurePort} }, [2]int{0, 0}},
	{"enableDebuggingHandlers", "enableDebuggingHandlers: true\nport: 10251\n", func(c nodekit.Config) any { return c.Server.SecurePort }, 10251},
	{"staticPodPath", "staticPodPath: /etc/kubernetes/manifests\n", func(c nodekit.Config) any { return c.Manifests }, "/etc/kubernetes/manifests"},
	{"syncFrequency", "syncFrequency: 30s\n", func(c nodekit.Config) any { return c.PodWorkers.ResyncInterval }, 30 * time.Second},
	{"fileCheckFrequency", "fileCheckFrequency: 5s\n", func(c nodekit.Config) any { return c.FileCheckPeriod }, 5 * time.Second},
	{"address", "address: 192.0.2.1\n", func(c nodekit.Config) any { return [2]string{c.Server.Address, c.Server.SecureAddress} }, [2]string{"192.0.2.1", "192.0.2.1"}},
	{"port", "port: 11250\n", func(c nodekit.Config) any { return c.Server.SecurePort }, 11250},
	{"readOnlyPort", "readOnlyPort: 11255\n", func(c nodekit.Config) any { return c.Server.Port }, 11255},
	{"tlsCertFile", "tlsCertFile: /pki/kubelet.crt\n", func(c nodekit.Config) any { return c.Server.TLSCertFile }, "/pki/kubelet.crt"},
	{"tlsPrivateKeyFile", "tlsPrivateKeyFile: /pki/kubelet.key\n", func(c nodekit.Config) any { return c.Server.TLSPrivateKeyFile }, "/pki/kubelet.key"},
	{"serverTLSBootstrap", "serverTLSBootstrap: true\n", func(c nodekit.Config) any { return c.Server.RotateServerCertificates }, true},
	{"authentication.x509.clientCAFile", "authentication:\n  x509:\n    clientCAFile: /pki/ca.crt\n", func(c nodekit.Config) any { return c.Server.ClientCAFile }, "/pki/ca.crt"},
	{"authentication.webhook.enabled", "authentication:\n  webhook:\n    enabled: true\n", func(c nodekit.Config) any { return c.Server.SecurePort }, 10250},
	{"authentication.webhook.cacheTTL", "authentication:\n  webhook:\n    cacheTTL: 45s\n", func(c nodekit.Config) any { return c.Server.AuthenticationCacheTTL }, 45 * time.Second},
	{"authentication.anonymous.enabled", "authentication:\n  anonymous:\n    enabled: true\n", func(c nodekit.Config) any { return c.Server.AnonymousAuth }, true},
	{"authorization.mode", "authorization:\n  mode: Webhook\n", func(c nodekit.Config) any { return c.Server.SecurePort }, 10250},
	{"authorization.webhook.cacheAuthorizedTTL", "authorization:\n  webhook:\n    cacheAuthorizedTTL: 1m\n", func(c nodekit.Config) any { return c.Server.AuthorizationAllowedCacheTTL }, time.Minute},
	{"authorization.webhook.cacheUnauthorizedTTL", "authorization:\n  webhook:\n    cacheUnauthorizedTTL: 5s\n", func(c nodekit.Config) any { return c.Server.AuthorizationDeniedCacheTTL }, 5 * time.Second},
	{"clusterDomain", "clusterDomain: edge.local\n", func(c nodekit.Config) any { return c.CRI.ClusterDomain }, "edge.local"},
	{"clusterDNS", "clusterDNS: [10.96.0.10, fd00::a]\n", func(c nodekit.Config) any { return fmt.Sprint(c.CRI.ClusterDNS) }, "[10.96.0.10 fd00::a]"},
	{"nodeStatusUpdateFrequency", "nodeStatusUpdateFrequency: 4s\nnodeStatusReportFrequency: 1m\n", func(c nodekit.Config) any { return c.NodeStatus.StatusUpdateFrequency }, 4 * time.Second},
	{"nodeStatusReportFrequency", "nodeStatusReportFrequency: 2m\n", func(c nodekit.Config) any { return c.NodeStatus.StatusReportFrequency }, 2 * time.Minute},
	{"nodeLeaseDurationSeconds", "nodeLeaseDurationSeconds: 20\n", func(c nodekit.Config) any { return c.NodeStatus.LeaseDuration }, 20 * time.Second},
	{"imageMinimumGCAge", "imageMinimumGCAge: 10m\n", func(c nodekit.Config) any { return c.ImageGC.MinAge }, 10 * time.Minute},
	{"imageMaximumGCAge", "imageMaximumGCAge: 168h\n", func(c nodekit.Config) any { return c.ImageGC.MaxAge }, 168 * time.Hour},
	{"imageGCHighThresholdPercent", "imageGCHighThresholdPercent: 90\n", func(c nodekit.Config) any { return c.ImageGC.HighThresholdPercent }, 90},
	{"imageGCLowThresholdPercent", "imageGCLowThresholdPercent: 70\n", func(c nodekit.Config) any { return c.ImageGC.LowThresholdPercent }, 70},
	{"cgroupRoot", "cgroupRoot: /edge\n", func(c nodekit.Config) any { return c.CRI.CgroupParent }, "/edge"},
	{"cgroupDriver", "cgroupDriver: systemd\n", func(c nodekit.Config) any { return c.CRI.CgroupDriver }, "systemd"},
	{"cgroupsPerQOS", "cgroupsPerQOS: true\ncgroupRoot: /edge\n", func(c nodekit.Config) any { return c.CRI.CgroupParent }, "/edge"},
	{"runtimeRequestTimeout", "runtimeRequestTimeout: 30s\n", func(c nodekit.Config) any { return c.RuntimeRequestTimeout }, 30 * time.Second},
	{"maxPods", "maxPods: 50\n", func(c nodekit.Config) any { return c.Agent.MaxPods }, 50},
	{"podPidsLimit", "podPidsLimit: -1\nmaxPods: 51\n", func(c nodekit.Config) any { return c.Agent.MaxPods }, 51},
	{"resolvConf", "resolvConf: /run/systemd/resolve/resolv.conf\n", func(c nodekit.Config) any { return c.CRI.ResolvConf }, "/run/systemd/resolve/resolv.conf"},
	{"cpuCFSQuota", "cpuCFSQuota: false\n", func(c nodekit.Config) any { return c.CRI.DisableCPUCFSQuota }, true},
	{"kubeAPIQPS", "kubeAPIQPS: 20\n", func(c nodekit.Config) any { return c.KubeAPIQPS }, float32(20)},
	{"kubeAPIBurst", "kubeAPIBurst: 40\n", func(c nodekit.Config) any { return c.KubeAPIBurst }, 40},
	{"serializeImagePulls", "serializeImagePulls: false\n", func(c nodekit.Config) any { return *c.CRI.SerializeImagePulls }, false},
	{"maxParallelImagePulls", "serializeImagePulls: false\nmaxParallelImagePulls: 4\n", func(c nodekit.Config) any { return c.CRI.MaxParallelImagePulls }, 4},
	{"evictionHard", "evictionHard:\n  memory.available: 1Gi\n  nodefs.available: 5%\n  imagefs.available: 5%\n  nodefs.inodesFree: 1%\n", func(c nodekit.Config) any { return c.EvictionHard }, "imagefs.available<5%,imagefs.inodesFree<0%,memory.available<1Gi,nodefs.available<5%,nodefs.inodesFree<1%"},
	{"evictionSoft", "evictionSoft:\n  memory.available: 2Gi\n", func(c nodekit.Config) any { return c.Eviction.Soft }, "memory.available<2Gi"},
	{"evictionSoftGracePeriod", "evictionSoftGracePeriod:\n  memory.available: 1m30s\n", func(c nodekit.Config) any { return fmt.Sprint(c.Eviction.SoftGracePeriod) }, "map[memory.available:1m30s]"},
	{"evictionPressureTransitionPeriod", "evictionPressureTransitionPeriod: 30s\n", func(c nodekit.Config) any { return c.Eviction.PressureTransitionPeriod }, 30 * time.Second},
	{"evictionMaxPodGracePeriod", "evictionMaxPodGracePeriod: 60\n", func(c nodekit.Config) any { return c.Eviction.MaxPodGracePeriodSeconds }, int64(60)},
	{"evictionMinimumReclaim", "evictionMinimumReclaim:\n  nodefs.available: 500Mi\n", func(c nodekit.Config) any { return fmt.Sprint(c.Eviction.MinimumReclaim) }, "map[nodefs.available:500Mi]"},
	{"mergeDefaultEvictionSettings", "mergeDefaultEvictionSettings: true\nevictionHard:\n  pid.available: 5%\n", func(c nodekit.Config) any { return c.EvictionHard }, "pid.available<5%"},
	{"containerLogMaxSize", "containerLogMaxSize: 50Mi\n", func(c nodekit.Config) any { return c.Logs.MaxSize }, "50Mi"},
	{"containerLogMaxFiles", "containerLogMaxFiles: 3\n", func(c nodekit.Config) any { return c.Logs.MaxFiles }, 3},
	{"containerLogMaxWorkers", "containerLogMaxWorkers: 2\n", func(c nodekit.Config) any { return c.Logs.MaxWorkers }, 2},
	{"containerLogMonitorInterval", "containerLogMonitorInterval: 30s\n", func(c nodekit.Config) any { return c.Logs.MonitorInterval }, 30 * time.Second},
	{"systemReserved", "systemReserved:\n  cpu: 100m\n  memory: 200Mi\n", func(c nodekit.Config) any { return fmt.Sprint(c.SystemReserved) }, "map[cpu:100m memory:200Mi]"},
	{"kubeReserved", "kubeReserved:\n  memory: 300Mi\n", func(c nodekit.Config) any { return fmt.Sprint(c.KubeReserved) }, "map[memory:300Mi]"},
	{"allowedUnsafeSysctls", "allowedUnsafeSysctls: [kernel.msg*, net.core.somaxconn]\n", func(c nodekit.Config) any { return fmt.Sprint(c.Agent.AllowedUnsafeSysctls) }, "[kernel.msg* net.core.somaxconn]"},
	{"podLogsDir", "podLogsDir: /srv/pod-logs\n", func(c nodekit.Config) any { return c.PodLogsDir }, "/srv/pod-logs"},
	{"seccompDefault", "seccompDefault: true\n", func(c nodekit.Config) any { return c.CRI.SeccompDefault }, true},
	{"registerNode", "registerNode: true\nmaxPods: 52\n", func(c nodekit.Config) any { return c.Agent.MaxPods }, 52},
	{"registerWithTaints", "registerWithTaints:\n- key: example.com/edge\n  value: \"true\"\n  effect: NoSchedule\n- key: dedicated\n  effect: NoExecute\n",
		func(c nodekit.Config) any { return fmt.Sprint(c.NodeStatus.Taints) }, fmt.Sprint([]corev1.Taint{
			{Key: "example.com/edge", Value: "true", Effect: corev1.TaintEffectNoSchedule}, {Key: "dedicated", Effect: corev1.TaintEffectNoExecute}})},
	{"containerRuntimeEndpoint", "containerRuntimeEndpoint: unix:///run/crio/crio.sock\n", func(c nodekit.Config) any { return c.RuntimeEndpoint }, "unix:///run/crio/crio.sock"},
	{"imageServiceEndpoint", "imageServiceEndpoint: unix:///run/images.sock\n", func(c nodekit.Config) any { return c.ImageEndpoint }, "unix:///run/images.sock"},
	{"crashLoopBackOff.maxContainerRestartPeriod", "crashLoopBackOff:\n  maxContainerRestartPeriod: 1m\n", func(c nodekit.Config) any { return c.CRI.MaxBackOff }, time.Minute},
	{"logging.verbosity", "logging:\n  verbosity: 4\n", nil, 4},
	{"logging.format", "logging:\n  format: text\n  verbosity: 2\n", nil, 2},
}

func TestEachSupportedFieldTakesEffect(t *testing.T) {
	for _, tc := range fieldCases {
		t.Run(tc.field, func(t *testing.T) {
			o, warnings, err := parseKubelet(t, kcHeader+tc.yaml)
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) != 0 {
				t.Errorf("a supported field warns: %q", warnings)
			}
			var got any
			if tc.got == nil { // logging sets the CLI's verbosity
				got = o.verbosity
			} else {
				got = tc.got(o.config())
			}
			if got != tc.want {
				t.Errorf("%s: got %v (%T), want %v (%T)", tc.field, got, got, tc.want, tc.want)
			}
			if !o.kubelet.set[tc.field] {
				t.Errorf("%s is not recorded as set", tc.field)
			}
		})
	}
}

func TestEverySupportedFieldHasACase(t *testing.T) {
	var cased []string
	for _, tc := range fieldCases {
		cased = append(cased, tc.field)
	}
	for _, f := range supportedFields {
		if !slices.Contains(cased, f) {
			t.Errorf("supported field %s has no case in fieldCases", f)
		}
	}
}

// allFieldPaths are the paths decodeKubeletConfig can report: the
// KubeletConfiguration's JSON names, with nestedFields walked into.
func allFieldPaths(v reflect.Type, prefix string, out map[string]bool) {
	for i := range v.NumField() {
		sf := v.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if sf.Anonymous || name == "" || name == "-" {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		if nestedFields[path] && sf.Type.Kind() == reflect.Struct {
			allFieldPaths(sf.Type, path, out)
			continue
		}
		out[path] = true
	}
}

func TestSupportedAndUnsupportedFieldsAreKubeletConfigurationFields(t *testing.T) {
	paths := map[string]bool{}
	allFieldPaths(reflect.TypeOf(kubeletconfigv1beta1.KubeletConfiguration{}), "", paths)
	for _, f := range supportedFields {
		if !paths[f] {
			t.Errorf("supported field %s is not a KubeletConfiguration field", f)
		}
	}
	for f := range unsupportedReasons {
		if !paths[f] {
			t.Errorf("unsupported field %s is not a KubeletConfiguration field", f)
		}
		if slices.Contains(supportedFields, f) {
			t.Errorf("field %s is both supported and unsupported", f)
		}
	}
}
