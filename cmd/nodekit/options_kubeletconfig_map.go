package main

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/managers/eviction"
)

// defaultContainerRuntimeEndpoint is the kubelet's v1beta1 default of
// containerRuntimeEndpoint.
const defaultContainerRuntimeEndpoint = "unix:///run/containerd/containerd.sock"

// supportedFields are the KubeletConfiguration fields nodekit maps onto
// its settings, each to a flag (flagValues) or to a nodekit.Config field
// (applyKubeletConfig). docs/configuration.md lists them.
var supportedFields = []string{
	"enableServer", "enableDebuggingHandlers", "staticPodPath", "syncFrequency", "fileCheckFrequency",
	"address", "port", "readOnlyPort", "tlsCertFile", "tlsPrivateKeyFile", "serverTLSBootstrap",
	"authentication.x509.clientCAFile", "authentication.webhook.enabled", "authentication.webhook.cacheTTL",
	"authentication.anonymous.enabled", "authorization.mode",
	"authorization.webhook.cacheAuthorizedTTL", "authorization.webhook.cacheUnauthorizedTTL",
	"clusterDomain", "clusterDNS",
	"nodeStatusUpdateFrequency", "nodeStatusReportFrequency", "nodeLeaseDurationSeconds",
	"imageMinimumGCAge", "imageMaximumGCAge", "imageGCHighThresholdPercent", "imageGCLowThresholdPercent",
	"cgroupRoot", "cgroupDriver", "cgroupsPerQOS", "runtimeRequestTimeout", "maxPods", "podPidsLimit", "resolvConf",
	"cpuCFSQuota", "kubeAPIQPS", "kubeAPIBurst", "serializeImagePulls", "maxParallelImagePulls",
	"evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionPressureTransitionPeriod",
	"evictionMaxPodGracePeriod", "evictionMinimumReclaim", "mergeDefaultEvictionSettings",
	"containerLogMaxSize", "containerLogMaxFiles", "containerLogMaxWorkers", "containerLogMonitorInterval",
	"systemReserved", "kubeReserved", "allowedUnsafeSysctls", "seccompDefault", "registerNode",
	"registerWithTaints", "containerRuntimeEndpoint", "imageServiceEndpoint",
	"crashLoopBackOff.maxContainerRestartPeriod", "logging.verbosity", "logging.format",
	"rotateCertificates", "staticPodURL", "staticPodURLHeader", "httpCheckFrequency",
	"shutdownGracePeriod", "shutdownGracePeriodCriticalPods", "podLogsDir",
}

// unsupportedReasons say why nodekit ignores a field it does not map;
// fields not named here have no counterpart in nodekit.
var unsupportedReasons = map[string]string{
	"healthzPort":                      "nodekit serves /healthz on the read-only port and the secure port, not on a port of its own",
	"healthzBindAddress":               "nodekit serves /healthz on the read-only port and the secure port, not on a port of its own",
	"shutdownGracePeriodByPodPriority": "graceful node shutdown by pod priority is set through the library only (nodekit.Config.Shutdown); use shutdownGracePeriod and shutdownGracePeriodCriticalPods",
	"featureGates":                     "nodekit has no feature gates",
	"registryPullQPS":                  "nodekit does not rate-limit image pulls",
	"registryBurst":                    "nodekit does not rate-limit image pulls",
	"eventRecordQPS":                   "nodekit does not rate-limit events",
	"eventBurst":                       "nodekit does not rate-limit events",
	"volumeStatsAggPeriod":             "nodekit computes volume usage when the stats are asked for",
	"cpuManagerPolicy":                 "the CPU manager is not built in nodekit",
	"memoryManagerPolicy":              "the memory manager is not built in nodekit",
	"topologyManagerPolicy":            "the topology manager is not built in nodekit",
	"failSwapOn":                       "nodekit does not check swap",
	"memorySwap":                       "nodekit does not configure swap for containers",
	"enforceNodeAllocatable":           "nodekit does not enforce node allocatable with cgroups; it subtracts the reservations in the node status and admission",
	"providerID":                       "nodekit does not set the node's providerID",
	"logging.flushFrequency":           "nodekit's logs are written unbuffered",
	"logging.options":                  "nodekit's text logger has no options",
}

// check refuses values nodekit cannot honour without changing what the
// file asks for in a way that matters: authentication and authorization
// that nodekit would make weaker or stronger than asked.
func (f *kubeletConfigFile) check() error {
	kc := &f.kc
	var errs []error
	if e := kc.Authentication.Webhook.Enabled; e != nil && !*e {
		errs = append(errs, errors.New("authentication.webhook.enabled: false is not supported: nodekit always authenticates bearer tokens with a TokenReview"))
	}
	if m := kc.Authorization.Mode; m != "" && m != kubeletconfigv1beta1.KubeletAuthorizationModeWebhook {
		errs = append(errs, fmt.Errorf("authorization.mode %q is not supported: nodekit authorizes every request with a SubjectAccessReview (mode Webhook)", m))
	}
	if d := kc.CgroupDriver; d != "" && d != "cgroupfs" && d != "systemd" {
		errs = append(errs, fmt.Errorf("cgroupDriver %q: want cgroupfs or systemd", d))
	}
	if l := kc.Logging.Format; l != "" && l != "text" {
		errs = append(errs, fmt.Errorf("logging.format %q is not supported: nodekit logs text", l))
	}
	if p := kc.PodPidsLimit; p != nil && *p < -1 {
		errs = append(errs, fmt.Errorf("podPidsLimit %d: want -1 (no limit), 0 or a limit", *p))
	}
	if e := kc.EnableDebuggingHandlers; e != nil && !*e {
		errs = append(errs, errors.New("enableDebuggingHandlers: false is not supported: nodekit's secure port always serves logs, exec, attach and port-forward"))
	}
	if r := kc.ResolverConfig; r != nil && *r == "" {
		errs = append(errs, errors.New(`resolvConf: "" (pods without the host's resolver settings) is not supported: give a file`))
	}
	if r := kc.RegisterNode; r != nil && !*r {
		errs = append(errs, errors.New("registerNode: false is not supported: a nodekit agent with a kubeconfig always registers its Node"))
	}
	return errors.Join(errs...)
}

// unsupportedField is a field the file sets that nodekit ignores.
type unsupportedField struct{ field, reason string }

// unsupported lists, sorted, the fields the file sets that nodekit does
// not map.
func (f *kubeletConfigFile) unsupported() []unsupportedField {
	supported := map[string]bool{}
	for _, s := range supportedFields {
		supported[s] = true
	}
	var out []unsupportedField
	for path := range f.set {
		if supported[path] {
			continue
		}
		reason := unsupportedReasons[path]
		if reason == "" {
			reason = "nodekit has no such setting"
		}
		out = append(out, unsupportedField{path, reason})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].field < out[j].field })
	return out
}

// flagValue is a flag set from a field of the file.
type flagValue struct{ field, flag, value string }

// flagValues are the flags the file sets: its fields that have a flag,
// and the kubelet's v1beta1 defaults where nodekit's flag defaults differ
// (readOnlyPort 0, containerRuntimeEndpoint containerd's socket,
// serializeImagePulls false with maxParallelImagePulls of 2 or more).
func (f *kubeletConfigFile) flagValues() []flagValue {
	kc := &f.kc
	var out []flagValue
	add := func(field, flag, value string) {
		out = append(out, flagValue{field, flag, value})
	}
	str := func(field, flag, v string) {
		if f.set[field] {
			add(field, flag, v)
		}
	}
	dur := func(field, flag string, d time.Duration) { str(field, flag, d.String()) }
	num := func(field, flag string, n int64) { str(field, flag, strconv.FormatInt(n, 10)) }

	str("staticPodPath", "manifests", kc.StaticPodPath)
	dur("fileCheckFrequency", "file-check-frequency", kc.FileCheckFrequency.Duration)
	str("address", "address", kc.Address)
	str("address", "secure-address", kc.Address)
	num("port", "secure-port", int64(kc.Port))
	add("readOnlyPort", "read-only-port", strconv.Itoa(int(kc.ReadOnlyPort)))
	if e := kc.EnableServer; e != nil && !*e {
		add("enableServer", "read-only-port", "0")
		add("enableServer", "secure-port", "0")
	}
	str("tlsCertFile", "tls-cert-file", kc.TLSCertFile)
	str("tlsPrivateKeyFile", "tls-private-key-file", kc.TLSPrivateKeyFile)
	str("serverTLSBootstrap", "rotate-server-certificates", strconv.FormatBool(kc.ServerTLSBootstrap))
	str("authentication.x509.clientCAFile", "client-ca-file", kc.Authentication.X509.ClientCAFile)
	if e := kc.Authentication.Anonymous.Enabled; e != nil {
		add("authentication.anonymous.enabled", "anonymous-auth", strconv.FormatBool(*e))
	}
	str("clusterDomain", "cluster-domain", kc.ClusterDomain)
	str("clusterDNS", "cluster-dns", strings.Join(kc.ClusterDNS, ","))
	dur("imageMinimumGCAge", "image-minimum-gc-age", kc.ImageMinimumGCAge.Duration)
	dur("imageMaximumGCAge", "image-maximum-gc-age", kc.ImageMaximumGCAge.Duration)
	if p := kc.ImageGCHighThresholdPercent; p != nil {
		add("imageGCHighThresholdPercent", "image-gc-high-threshold", strconv.Itoa(int(*p)))
	}
	if p := kc.ImageGCLowThresholdPercent; p != nil {
		add("imageGCLowThresholdPercent", "image-gc-low-threshold", strconv.Itoa(int(*p)))
	}
	str("cgroupRoot", "cgroup-root", kc.CgroupRoot)
	str("cgroupDriver", "cgroup-driver", kc.CgroupDriver)
	dur("runtimeRequestTimeout", "runtime-request-timeout", kc.RuntimeRequestTimeout.Duration)
	num("maxPods", "max-pods", int64(kc.MaxPods))
	if q := kc.CPUCFSQuota; q != nil {
		add("cpuCFSQuota", "cpu-cfs-quota", strconv.FormatBool(*q))
	}
	if q := kc.KubeAPIQPS; q != nil {
		add("kubeAPIQPS", "kube-api-qps", strconv.Itoa(int(*q)))
	}
	num("kubeAPIBurst", "kube-api-burst", int64(kc.KubeAPIBurst))
	out = append(out, f.imagePullFlags()...)
	out = append(out, f.evictionFlags()...)
	str("containerLogMaxSize", "container-log-max-size", kc.ContainerLogMaxSize)
	if n := kc.ContainerLogMaxFiles; n != nil {
		add("containerLogMaxFiles", "container-log-max-files", strconv.Itoa(int(*n)))
	}
	str("systemReserved", "system-reserved", joinMap(kc.SystemReserved, "="))
	str("kubeReserved", "kube-reserved", joinMap(kc.KubeReserved, "="))
	str("allowedUnsafeSysctls", "allowed-unsafe-sysctls", strings.Join(kc.AllowedUnsafeSysctls, ","))
	str("registerWithTaints", "register-with-taints", formatTaints(kc.RegisterWithTaints))
	str("rotateCertificates", "rotate-certificates", strconv.FormatBool(kc.RotateCertificates))
	str("staticPodURL", "manifest-url", kc.StaticPodURL)
	str("staticPodURLHeader", "manifest-url-header", (&headerFlag{header: http.Header(kc.StaticPodURLHeader)}).String())
	dur("httpCheckFrequency", "http-check-frequency", kc.HTTPCheckFrequency.Duration)
	dur("shutdownGracePeriod", "shutdown-grace-period", kc.ShutdownGracePeriod.Duration)
	dur("shutdownGracePeriodCriticalPods", "shutdown-grace-period-critical-pods", kc.ShutdownGracePeriodCriticalPods.Duration)
	endpoint := kc.ContainerRuntimeEndpoint
	if endpoint == "" {
		endpoint = defaultContainerRuntimeEndpoint
	}
	add("containerRuntimeEndpoint", "runtime-endpoint", endpoint)
	str("imageServiceEndpoint", "image-endpoint", kc.ImageServiceEndpoint)
	num("logging.verbosity", "v", int64(kc.Logging.Verbosity))
	out = append(out, f.hardeningFlags()...)
	return out
}

// imagePullFlags are serializeImagePulls and maxParallelImagePulls, with
// the kubelet's default: serialized unless maxParallelImagePulls is 2 or
// more.
func (f *kubeletConfigFile) imagePullFlags() []flagValue {
	kc := &f.kc
	var out []flagValue
	if n := kc.MaxParallelImagePulls; n != nil {
		out = append(out, flagValue{"maxParallelImagePulls", "max-parallel-image-pulls", strconv.Itoa(int(*n))})
	}
	switch s := kc.SerializeImagePulls; {
	case s != nil:
		out = append(out, flagValue{"serializeImagePulls", "serialize-image-pulls", strconv.FormatBool(*s)})
	case kc.MaxParallelImagePulls != nil && *kc.MaxParallelImagePulls >= 2:
		out = append(out, flagValue{"maxParallelImagePulls", "serialize-image-pulls", "false"})
	}
	return out
}

// evictionFlags are the eviction fields. A file's evictionHard replaces
// the kubelet's default thresholds whole unless mergeDefaultEvictionSettings
// is true: a default signal the file does not name is turned off (0%),
// where nodekit's --eviction-hard keeps it.
func (f *kubeletConfigFile) evictionFlags() []flagValue {
	kc := &f.kc
	var out []flagValue
	if f.set["evictionHard"] {
		hard := map[string]string{}
		for k, v := range kc.EvictionHard {
			hard[k] = v
		}
		if m := kc.MergeDefaultEvictionSettings; m == nil || !*m {
			defaults, _ := eviction.ParseThresholds(eviction.DefaultHard)
			for sig := range defaults {
				if _, ok := hard[string(sig)]; !ok {
					hard[string(sig)] = "0%"
				}
			}
		}
		out = append(out, flagValue{"evictionHard", "eviction-hard", joinMap(hard, "<")})
	}
	if f.set["evictionSoft"] {
		out = append(out, flagValue{"evictionSoft", "eviction-soft", joinMap(kc.EvictionSoft, "<")})
	}
	if f.set["evictionSoftGracePeriod"] {
		out = append(out, flagValue{"evictionSoftGracePeriod", "eviction-soft-grace-period", joinMap(kc.EvictionSoftGracePeriod, "=")})
	}
	if f.set["evictionMinimumReclaim"] {
		out = append(out, flagValue{"evictionMinimumReclaim", "eviction-minimum-reclaim", joinMap(kc.EvictionMinimumReclaim, "=")})
	}
	if f.set["evictionMaxPodGracePeriod"] {
		out = append(out, flagValue{"evictionMaxPodGracePeriod", "eviction-max-pod-grace-period", strconv.Itoa(int(kc.EvictionMaxPodGracePeriod))})
	}
	if f.set["evictionPressureTransitionPeriod"] {
		out = append(out, flagValue{"evictionPressureTransitionPeriod", "eviction-pressure-transition-period", kc.EvictionPressureTransitionPeriod.Duration.String()})
	}
	return out
}

// applyKubeletConfig sets the settings of a KubeletConfiguration file that
// have no flag. It does nothing without such a file.
func (o *options) applyKubeletConfig(cfg *nodekit.Config) {
	f := o.kubelet
	if f == nil {
		return
	}
	kc := &f.kc
	set := func(field string, dst *time.Duration, d time.Duration) {
		if f.set[field] {
			*dst = d
		}
	}
	set("syncFrequency", &cfg.PodWorkers.ResyncInterval, kc.SyncFrequency.Duration)
	set("authentication.webhook.cacheTTL", &cfg.Server.AuthenticationCacheTTL, kc.Authentication.Webhook.CacheTTL.Duration)
	set("authorization.webhook.cacheAuthorizedTTL", &cfg.Server.AuthorizationAllowedCacheTTL, kc.Authorization.Webhook.CacheAuthorizedTTL.Duration)
	set("authorization.webhook.cacheUnauthorizedTTL", &cfg.Server.AuthorizationDeniedCacheTTL, kc.Authorization.Webhook.CacheUnauthorizedTTL.Duration)
	set("nodeStatusUpdateFrequency", &cfg.NodeStatus.StatusUpdateFrequency, kc.NodeStatusUpdateFrequency.Duration)
	// As the kubelet: without its own value, the report frequency follows
	// an update frequency the file sets.
	set("nodeStatusUpdateFrequency", &cfg.NodeStatus.StatusReportFrequency, kc.NodeStatusUpdateFrequency.Duration)
	set("nodeStatusReportFrequency", &cfg.NodeStatus.StatusReportFrequency, kc.NodeStatusReportFrequency.Duration)
	set("nodeLeaseDurationSeconds", &cfg.NodeStatus.LeaseDuration, time.Duration(kc.NodeLeaseDurationSeconds)*time.Second)
	if f.set["podLogsDir"] && cfg.PodLogsDir == "" { // --pod-logs-dir wins
		cfg.PodLogsDir = kc.PodLogsDir
	}
	if r := kc.ResolverConfig; r != nil {
		cfg.CRI.ResolvConf = *r
	}
	if s := kc.SeccompDefault; s != nil {
		cfg.CRI.SeccompDefault = *s
	}
	if n := kc.ContainerLogMaxWorkers; n != nil {
		cfg.Logs.MaxWorkers = int(*n)
	}
	if d := kc.ContainerLogMonitorInterval; d != nil {
		cfg.Logs.MonitorInterval = d.Duration
	}
	if d := kc.CrashLoopBackOff.MaxContainerRestartPeriod; d != nil {
		cfg.CRI.MaxBackOff = d.Duration
	}
	o.applyHardening(cfg)
}

// joinMap is m as "k<sep>v" pairs joined by commas, sorted by key.
func joinMap(m map[string]string, sep string) string {
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, k+sep+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
