package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/managers/eviction"
	"github.com/nodekit/nodekit/managers/images"
	"github.com/nodekit/nodekit/managers/logs"
	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/runtime/cri"
	"github.com/nodekit/nodekit/server"
)

// options are the flags of `nodekit run`. The --config file is a
// kubelet.config.k8s.io/v1beta1 KubeletConfiguration
// (options_kubeletconfig.go) or, deprecated, flag names in camelCase; a
// flag given on the command line wins over the file.
type options struct {
	configFile      string
	manifests       string
	runtime         string
	runtimeEndpoint string
	imageEndpoint   string
	nodeName        string
	nodeIP          string
	instanceID      string
	rootDir         string
	podLogsDir      string
	containerLogs   string
	cgroupRoot      string
	address         string
	port            optionalPort
	server          serverOptions
	sources         sourceOptions
	certs           certOptions
	maxPods         int
	fileCheck       time.Duration
	kubeconfig      string
	kubeAPIQPS      float32
	kubeAPIBurst    int
	runtimeTimeout  time.Duration
	maxStarts       int
	verbosity       int
	pleg            string

	clusterDNS            []string
	clusterDomain         string
	cgroupDriver          string
	cpuCFSQuota           bool
	serializeImagePulls   bool
	maxParallelImagePulls int
	allowedUnsafeSysctls  []string

	containerLogMaxSize  string
	containerLogMaxFiles int

	imageGCHigh   int
	imageGCLow    int
	imageGCMinAge time.Duration
	imageGCMaxAge time.Duration

	kubeReserved   map[string]string
	systemReserved map[string]string
	evictionHard   string

	evictionSoft            string
	evictionSoftGrace       map[string]string
	evictionMinReclaim      map[string]string
	evictionMaxPodGrace     int64
	evictionPressureTransit time.Duration

	shutdownGracePeriod         time.Duration
	shutdownGracePeriodCritical time.Duration
	kflags                      kubeletFlags
	kubelet                     *kubeletConfigFile // the --config file, when it is a KubeletConfiguration
}

func (o *options) addFlags(fs *pflag.FlagSet) {
	def := nodekit.DefaultConfig()
	fs.StringVar(&o.configFile, "config", "", "kubelet.config.k8s.io/v1beta1 KubeletConfiguration file (docs/configuration.md; a file of flag names in camelCase is deprecated); flags override it")
	fs.StringVar(&o.manifests, "manifests", "", "directory of static pod manifests (YAML or JSON, one Pod per file)")
	fs.StringVar(&o.runtime, "runtime", nodekit.RuntimeCRI, "container runtime: cri (the CRI runtime at --runtime-endpoint) or sim (a SIMULATED in-process runtime where nothing runs, for research, benchmarks and trying the agent)")
	fs.StringVar(&o.runtimeEndpoint, "runtime-endpoint", "", "CRI runtime endpoint, e.g. unix:///run/containerd/containerd.sock")
	fs.StringVar(&o.imageEndpoint, "image-endpoint", "", "CRI image endpoint (default: the runtime endpoint)")
	fs.StringVar(&o.nodeName, "node-name", "", "node name (default: the lowercased hostname)")
	fs.StringVar(&o.nodeIP, "node-ip", "", "node IP reported as the pods' hostIP (a loopback address is accepted)")
	fs.StringVar(&o.instanceID, "instance-id", "", "marks the sandboxes this agent owns (default: the node name)")
	fs.StringVar(&o.rootDir, "root-dir", def.RootDir, "directory for pod directories")
	fs.StringVar(&o.podLogsDir, "pod-logs-dir", "", "directory of the pods' log directories, the KubeletConfiguration's podLogsDir, which has no kubelet flag (default /var/log/pods; --root-dir/logs with --runtime sim)")
	fs.StringVar(&o.containerLogs, "container-logs-dir", "", "directory of the links to container logs that log shippers read, fixed in the kubelet; set it only for agents sharing a machine (default /var/log/containers; --root-dir/containers with --runtime sim)")
	fs.StringVar(&o.cgroupRoot, "cgroup-root", "", "cgroup root of the pods' QoS and pod cgroups (<root>/kubepods/...), e.g. /nodekit (default: /, as the kubelet)")
	fs.StringVar(&o.address, "address", def.Server.Address, "IP address the HTTP server listens on")
	fs.Var(&o.server.readOnlyPort, "read-only-port", fmt.Sprintf("port of the unauthenticated read-only HTTP server (/pods, /healthz, /metrics); 0 turns it off (default %d; 0 with --kubeconfig or a KubeletConfiguration --config)", server.DefaultPort))
	fs.Var(&o.port, "port", "deprecated name of --read-only-port")
	_ = fs.MarkDeprecated("port", "use --read-only-port instead")
	o.addServerFlags(fs)
	o.addCertFlags(fs)
	fs.IntVar(&o.maxPods, "max-pods", 110, "most pods this node runs")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig that joins the node to a cluster (a node's own credentials suffice)")
	fs.Float32Var(&o.kubeAPIQPS, "kube-api-qps", 50, "requests per second to the API server")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 100, "burst of requests to the API server")
	fs.DurationVar(&o.fileCheck, "file-check-frequency", 20*time.Second, "how often the manifest directory is re-read")
	fs.DurationVar(&o.runtimeTimeout, "runtime-request-timeout", 2*time.Minute, "timeout of each CRI call")
	fs.IntVar(&o.maxStarts, "max-parallel-starts", 0, "most RunPodSandbox, CreateContainer and StartContainer calls in flight at once, those of pods further along first (0: no limit, as the kubelet)")
	fs.IntVarP(&o.verbosity, "v", "v", 0, "log verbosity (2: per-pod changes, 4: debug)")
	fs.StringVar(&o.pleg, "pleg", string(pleg.KindGeneric), "pod lifecycle event generator: generic (relists the runtime every second) or evented (CRI container events, relisting only to reconcile and when the event stream fails)")
	o.addConfinementFlags(fs)
	o.addSourceFlags(fs)
	o.addKubeletFlags(fs)
	fs.StringVar(&o.containerLogMaxSize, "container-log-max-size", logs.DefaultMaxSize, "size (a quantity such as 10Mi) at which a container's log file is rotated")
	fs.IntVar(&o.containerLogMaxFiles, "container-log-max-files", logs.DefaultMaxFiles, "most log files kept per container, the current one included (at least 2)")
	fs.IntVar(&o.imageGCHigh, "image-gc-high-threshold", images.DefaultHighThresholdPercent, "percent of the image filesystem's capacity in use at or above which unused images are removed (100 turns it off)")
	fs.IntVar(&o.imageGCLow, "image-gc-low-threshold", images.DefaultLowThresholdPercent, "percent of the image filesystem's capacity image garbage collection brings usage down to")
	fs.DurationVar(&o.imageGCMinAge, "image-minimum-gc-age", images.DefaultMinAge, "minimum age of an unused image before it is garbage collected")
	fs.StringToStringVar(&o.kubeReserved, "kube-reserved", nil, "resources reserved for the node's agents, e.g. cpu=100m,memory=256Mi,ephemeral-storage=1Gi,pid=1000; left out of the node's allocatable")
	fs.StringToStringVar(&o.systemReserved, "system-reserved", nil, "resources reserved for the system, as --kube-reserved")
	fs.StringVar(&o.evictionHard, "eviction-hard", eviction.DefaultHard, "hard eviction thresholds (signal<quantity or percent); signals not named keep their defaults, none turns them off; memory.available and nodefs.available are left out of the node's allocatable")
	fs.StringVar(&o.evictionSoft, "eviction-soft", "", "soft eviction thresholds (signal<quantity or percent), each with a grace period in --eviction-soft-grace-period")
	fs.StringToStringVar(&o.evictionSoftGrace, "eviction-soft-grace-period", nil, "grace period of each soft threshold, e.g. memory.available=1m30s")
	fs.StringToStringVar(&o.evictionMinReclaim, "eviction-minimum-reclaim", nil, "how far past its threshold each signal must get back, e.g. memory.available=0Mi,nodefs.available=500Mi")
	fs.Int64Var(&o.evictionMaxPodGrace, "eviction-max-pod-grace-period", 0, "longest grace period, in seconds, of a pod evicted for a soft threshold (0: the pod's own)")
	fs.DurationVar(&o.evictionPressureTransit, "eviction-pressure-transition-period", 5*time.Minute, "how long a pressure condition stays True after it was last observed")
	fs.DurationVar(&o.imageGCMaxAge, "image-maximum-gc-age", 0, "images unused for longer are garbage collected whatever the usage (0: off)")
	fs.DurationVar(&o.shutdownGracePeriod, "shutdown-grace-period", 0, "how long the node delays its shutdown for pods to terminate, critical pods last (0: graceful node shutdown off; needs systemd-logind, which nodekit cannot reach yet: see managers/shutdown)")
	fs.DurationVar(&o.shutdownGracePeriodCritical, "shutdown-grace-period-critical-pods", 0, "the part of --shutdown-grace-period kept for critical pods (priority system-cluster-critical and above); at most --shutdown-grace-period")
}

// addConfinementFlags adds the flags of pod DNS, cgroups and image pulls.
func (o *options) addConfinementFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.clusterDNS, "cluster-dns", nil, "comma-separated cluster DNS server addresses for pods with dnsPolicy ClusterFirst (without it they get the host's resolver settings)")
	fs.StringVar(&o.clusterDomain, "cluster-domain", cri.DefaultClusterDomain, "cluster DNS domain, for pod DNS search paths")
	fs.StringVar(&o.cgroupDriver, "cgroup-driver", cri.CgroupDriverCgroupfs, "cgroup driver: cgroupfs (cgroupfs directories, cgroup v1 or v2) or systemd (slice units over D-Bus); the runtime's, when it reports one")
	fs.BoolVar(&o.cpuCFSQuota, "cpu-cfs-quota", true, "enforce container cpu limits with CFS quotas")
	fs.BoolVar(&o.serializeImagePulls, "serialize-image-pulls", true, "pull one image at a time")
	fs.IntVar(&o.maxParallelImagePulls, "max-parallel-image-pulls", 0, "most concurrent image pulls when --serialize-image-pulls=false (0: no limit)")
	fs.StringSliceVar(&o.allowedUnsafeSysctls, "allowed-unsafe-sysctls", nil, "comma-separated unsafe sysctls or patterns ending in * (kernel.msg*,net.core.somaxconn) that pods may set beyond the safe set")
}

// applyConfigFile sets every flag that was not given on the command line from
// the config file, if there is one. Unknown keys are an error naming them.
func applyConfigFile(fs *pflag.FlagSet, path string) error {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read config file: %w", err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		return fmt.Errorf("parse config file %s: %w", path, err)
	}
	byKey := map[string]*pflag.Flag{}
	fs.VisitAll(func(f *pflag.Flag) { byKey[camelCase(f.Name)] = f })
	for key, v := range values {
		f, ok := byKey[key]
		if !ok || key == "config" {
			return fmt.Errorf("config file %s: unknown field %q", path, key)
		}
		if f.Changed {
			continue
		}
		// fs.Set, unlike f.Value.Set, marks the flag as set and warns about
		// a deprecated name.
		if err := fs.Set(f.Name, scalar(v)); err != nil {
			return fmt.Errorf("config file %s: field %q: %w", path, key, err)
		}
	}
	return nil
}

func scalar(v any) string {
	if list, ok := v.([]any); ok {
		parts := make([]string, len(list))
		for i, e := range list {
			parts[i] = scalar(e)
		}
		return strings.Join(parts, ",")
	}
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return fmt.Sprint(int64(f))
	}
	return fmt.Sprint(v)
}

// camelCase turns a flag name such as "runtime-endpoint" into "runtimeEndpoint".
func camelCase(flag string) string {
	parts := strings.Split(flag, "-")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// config turns the options into a nodekit.Config.
func (o *options) config() nodekit.Config {
	cfg := nodekit.DefaultConfig()
	cfg.Manifests = o.manifests
	cfg.Runtime = o.runtime
	cfg.RuntimeEndpoint = o.runtimeEndpoint
	cfg.ImageEndpoint = o.imageEndpoint
	cfg.NodeName = strings.ToLower(o.nodeName)
	cfg.InstanceID = o.instanceID
	cfg.RootDir = o.rootDir
	cfg.PodLogsDir, cfg.ContainerLogsDir = o.podLogsDir, o.containerLogs
	cfg.CRI.CgroupParent = o.cgroupRoot
	cfg.FileCheckPeriod = o.fileCheck
	cfg.Kubeconfig = o.kubeconfig
	cfg.KubeAPIQPS = o.kubeAPIQPS
	cfg.KubeAPIBurst = o.kubeAPIBurst
	cfg.RuntimeRequestTimeout = o.runtimeTimeout
	cfg.MaxParallelStarts = o.maxStarts
	cfg.Agent.NodeIP = o.nodeIP
	cfg.Agent.MaxPods = o.maxPods
	cfg.Server.Address = o.address
	o.applyServer(&cfg)
	o.applySources(&cfg)
	o.applyCerts(&cfg)
	cfg.PLEG.Kind = pleg.Kind(o.pleg)
	cfg.CRI.ClusterDNS = o.clusterDNS
	cfg.CRI.ClusterDomain = o.clusterDomain
	cfg.CRI.CgroupDriver = o.cgroupDriver
	cfg.CRI.DisableCPUCFSQuota = !o.cpuCFSQuota
	cfg.CRI.SerializeImagePulls = &o.serializeImagePulls
	cfg.CRI.MaxParallelImagePulls = o.maxParallelImagePulls
	cfg.Agent.AllowedUnsafeSysctls = o.allowedUnsafeSysctls
	cfg.Logs.MaxSize = o.containerLogMaxSize
	cfg.Logs.MaxFiles = o.containerLogMaxFiles
	cfg.ImageGC.HighThresholdPercent = o.imageGCHigh
	cfg.ImageGC.LowThresholdPercent = o.imageGCLow
	cfg.ImageGC.MinAge = o.imageGCMinAge
	cfg.ImageGC.MaxAge = o.imageGCMaxAge
	cfg.KubeReserved, cfg.SystemReserved, cfg.EvictionHard = o.kubeReserved, o.systemReserved, o.evictionHard
	cfg.Eviction.Soft, cfg.Eviction.SoftGracePeriod, cfg.Eviction.MinimumReclaim = o.evictionSoft, o.evictionSoftGrace, o.evictionMinReclaim
	cfg.Eviction.MaxPodGracePeriodSeconds, cfg.Eviction.PressureTransitionPeriod = o.evictionMaxPodGrace, o.evictionPressureTransit
	cfg.Shutdown.GracePeriod, cfg.Shutdown.GracePeriodCriticalPods = o.shutdownGracePeriod, o.shutdownGracePeriodCritical
	o.applyKubeletFlags(&cfg)
	return cfg
}
