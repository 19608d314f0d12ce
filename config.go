package nodekit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/managers/certificate"
	"github.com/nodekit/nodekit/managers/eviction"
	"github.com/nodekit/nodekit/managers/images"
	"github.com/nodekit/nodekit/managers/logs"
	"github.com/nodekit/nodekit/managers/nodestatus"
	"github.com/nodekit/nodekit/managers/objects"
	"github.com/nodekit/nodekit/managers/prober"
	"github.com/nodekit/nodekit/managers/shutdown"
	"github.com/nodekit/nodekit/managers/status"
	"github.com/nodekit/nodekit/managers/volumes"
	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/podworkers"
	"github.com/nodekit/nodekit/runtime/cri"
	"github.com/nodekit/nodekit/runtime/sim"
	"github.com/nodekit/nodekit/server"
	"github.com/nodekit/nodekit/sources/apiserver"
	httpsource "github.com/nodekit/nodekit/sources/http"
)

// Values of Config.Runtime.
const (
	// RuntimeCRI is a CRI runtime (containerd, CRI-O) at RuntimeEndpoint.
	RuntimeCRI = "cri"
	// RuntimeSim is the SIMULATED in-process runtime of runtime/sim: nothing
	// runs. It is for research, benchmarks and trying the agent.
	RuntimeSim = "sim"
)

// Config is the whole agent's configuration: a few shared settings and one
// struct per subsystem. Each subsystem receives only its own struct.
type Config struct {
	// NodeName is the node's name. Defaults to the lowercased hostname.
	NodeName string
	// InstanceID marks the sandboxes this agent owns, so that it can share a
	// container runtime with other clients. Defaults to NodeName.
	InstanceID string
	// RootDir holds pod directories. Defaults to /var/lib/nodekit.
	RootDir string
	// PodLogsDir holds the container logs, in the kubelet's layout
	// <PodLogsDir>/<namespace>_<pod>_<uid>/<container>/<restartCount>.log
	// (the kubelet's podLogsDir). Defaults to /var/log/pods, and to
	// RootDir/logs with the simulated runtime (which runs nothing).
	PodLogsDir string
	// ContainerLogsDir holds the links
	// <pod>_<namespace>_<container>-<containerID>.log to each container's
	// log file, which log shippers read. The kubelet's is fixed; set it
	// only to keep agents that share a machine apart. Defaults to
	// /var/log/containers, and to RootDir/containers with the simulated
	// runtime.
	ContainerLogsDir string
	// Runtime selects the container runtime: "cri" for the CRI runtime at
	// RuntimeEndpoint, or "sim" for the simulated in-process runtime
	// (runtime/sim), where nothing runs. Defaults to "cri".
	Runtime string
	// RuntimeEndpoint is the CRI runtime's socket, e.g.
	// unix:///run/containerd/containerd.sock. Required when Runtime is
	// "cri". Defaults to none.
	RuntimeEndpoint string
	// ImageEndpoint is the CRI image service's socket. Defaults to
	// RuntimeEndpoint.
	ImageEndpoint string
	// RuntimeRequestTimeout bounds each CRI call. Defaults to 2m.
	RuntimeRequestTimeout time.Duration
	// MaxParallelStarts is the most RunPodSandbox, CreateContainer and
	// StartContainer calls in flight at once (cri.LimitStarts); the others
	// wait their turn, those of pods further along first. 0 is no limit, as
	// the kubelet. Defaults to 0.
	MaxParallelStarts int
	// Manifests is a directory of static pod manifests. Defaults to none.
	Manifests string
	// FileCheckPeriod is how often the manifest directory is re-read even
	// without change notifications. Defaults to 20s.
	FileCheckPeriod time.Duration
	// HTTPSource reads static pods from a URL (the kubelet's
	// --manifest-url) when its URL is set; its NodeName is NodeName.
	// Defaults to none; with a URL, to a read every 20s with a 10s timeout.
	HTTPSource httpsource.Config

	// Kubeconfig joins the node to a cluster: pods bound to the node come
	// from the API server, statuses and mirror pods go to it, and the Node
	// and its Lease are kept there. It works with a node's own credentials.
	// Defaults to none: the agent runs static pods alone.
	Kubeconfig string
	// KubeAPIQPS limits requests to the API server per second. Defaults to 50.
	KubeAPIQPS float32
	// KubeAPIBurst is the burst allowed above KubeAPIQPS. Defaults to 100.
	KubeAPIBurst int
	// DisablePodCheckpoint turns off the local checkpoint of the API
	// server's pods, for the kubelet's behaviour: after a restart with the
	// API server away, no API pod runs until it answers. Defaults to false:
	// the pods are checkpointed under RootDir/pod-checkpoints and run from
	// there when the API server does not answer within
	// APISource.OfflineAfter at start.
	DisablePodCheckpoint bool
	// PodCheckpointObjects turns on the object checkpoint, apart from the
	// pod checkpoint (which it needs): the ConfigMaps, Secrets and
	// service-account tokens the checkpointed pods' volumes and env are
	// made of are kept on disk (RootDir/pod-checkpoint-objects, 0600
	// files), so that after a reboot with the API server away those pods
	// can start again. Secrets and tokens then rest on persistent disk,
	// where the kubelet keeps them on tmpfs only. Off, nothing of them is
	// written and the copies an earlier run left are removed at start.
	// Defaults to false.
	PodCheckpointObjects bool
	// APISource configures the API server pod source (used with a
	// Kubeconfig); its NodeName is NodeName, and its CheckpointDir
	// defaults to RootDir/pod-checkpoints (none with DisablePodCheckpoint).
	// Defaults to a 50ms debounce and a 10s OfflineAfter.
	APISource apiserver.Config
	// Certificates are the node's client credentials that do not expire:
	// TLS bootstrap (BootstrapKubeconfig writes Kubeconfig) and client
	// certificate rotation. Its NodeName and Kubeconfig are the agent's, its
	// CertDir defaults to Server.CertDir, else RootDir/pki. Defaults to
	// both off.
	Certificates certificate.Config

	// KubeReserved is reserved for the node's agents (--kube-reserved):
	// cpu, memory, ephemeral-storage and pid quantities by name. It is left
	// out of the node's allocatable resources, in the node status and in
	// admission (pid is accepted but, without pod cgroup enforcement,
	// changes nothing). Defaults to none.
	KubeReserved map[string]string
	// SystemReserved is reserved for the system (--system-reserved), as
	// KubeReserved. Defaults to none.
	SystemReserved map[string]string
	// EvictionHard are the hard eviction thresholds (--eviction-hard),
	// e.g. "memory.available<100Mi,nodefs.available<10%"; a signal not
	// named keeps the kubelet's default, "none" turns them all off. Those
	// of memory.available and nodefs.available are left out of the
	// allocatable resources. Defaults to eviction.DefaultHard.
	EvictionHard string

	// NodeStatus configures the Node object kept with a Kubeconfig: its
	// Labels (--node-labels) and Taints (registerWithTaints) at
	// registration, how often its status is updated and reported, and its
	// Lease's duration. Its NodeName, NodeIP, MaxPods, RootDir,
	// KubeletPort, Reserved and EvictionHard are filled from the shared
	// settings. Defaults to the kubelet's settings.
	NodeStatus nodestatus.Config

	// Agent configures the sync loop.
	Agent agent.Config
	// PLEG picks and configures the PLEG: Kind "generic" (relisting, the
	// default) or "evented" (CRI container events, with relisting as a
	// reconcile and a fallback; Evented holds its settings).
	PLEG pleg.Config
	// PodWorkers configures the pod workers.
	PodWorkers podworkers.Config
	// CRI configures the CRI runtime manager. Complete gives its
	// CgroupParent the kubelet's default cgroupRoot, "/" (pod cgroups under
	// /kubepods), unless CgroupsPerQOS is false (then sandboxes get the
	// runtime's default parent, as with the kubelet's cgroupsPerQOS false
	// and no cgroupRoot) or the runtime is the simulated one (no cgroups).
	CRI cri.Config
	// Server configures the node's HTTP servers: the read-only port (Port;
	// 0, off, in DefaultConfig, as the kubelet's readOnlyPort default;
	// server.DefaultPort is 10255) and the authenticated kubelet API on
	// SecurePort (10250 in DefaultConfig; it runs only with a Kubeconfig).
	// The CLI opens the read-only port on 10255 for a standalone node.
	Server server.Config
	// Sim configures the simulated runtime when Runtime is "sim". Defaults
	// to no latency and every image present.
	Sim sim.Config
	// Prober configures the liveness, readiness and startup probes.
	// Defaults to the kubelet's settings.
	Prober prober.Config
	// Volumes configures the volume manager. Its RootDir is RootDir.
	// Defaults to the kubelet's settings.
	Volumes volumes.Config
	// Objects configures the ConfigMap and Secret caches and the
	// service-account token manager (used with an API server). Defaults to
	// the kubelet's settings.
	Objects objects.Config
	// Logs is the container log rotation policy (not used with the
	// simulated runtime, which writes no logs). Defaults to the kubelet's:
	// 10Mi, 5 files, checked every 10s.
	Logs logs.Config
	// ImageGC is the image garbage collection policy (not run with the
	// simulated runtime). Defaults to the kubelet's: 85% high and 80% low
	// thresholds of the image filesystem, a 2m minimum age, no maximum
	// age, every 5m.
	ImageGC images.Config
	// Eviction is the eviction policy (not run with the simulated
	// runtime); its Hard thresholds are EvictionHard's. Defaults to the
	// kubelet's.
	Eviction eviction.Config
	// Shutdown is the graceful node shutdown policy
	// (--shutdown-grace-period, --shutdown-grace-period-critical-pods).
	// Defaults to off, as the kubelet's.
	Shutdown shutdown.Config
}

// DefaultConfig returns a Config with every default filled in that cannot
// be left to a zero value: the node name from the host name, the root dir,
// the read-only server off (Port 0, as the kubelet's readOnlyPort default;
// set Server.Port to server.DefaultPort to open it on 127.0.0.1:10255) and
// the secure one on 127.0.0.1:10250.
func DefaultConfig() Config {
	return Config{
		RootDir: "/var/lib/nodekit",
		Server:  server.Config{Address: "127.0.0.1", SecurePort: server.DefaultSecurePort},
	}
}

// Complete fills in the derived settings: NodeName from the host name,
// InstanceID from NodeName, and each subsystem's copy of the shared ones.
func (c Config) Complete() (Config, error) {
	if c.NodeName == "" {
		host, err := os.Hostname()
		if err != nil {
			return c, fmt.Errorf("nodeName is not set and the host name is unknown: %w", err)
		}
		c.NodeName = strings.ToLower(host)
	}
	if c.InstanceID == "" {
		c.InstanceID = c.NodeName
	}
	if c.RootDir == "" {
		c.RootDir = "/var/lib/nodekit"
	}
	if c.Runtime == "" {
		c.Runtime = RuntimeCRI
	}
	c = c.logDirDefaults()
	if c.ImageEndpoint == "" {
		c.ImageEndpoint = c.RuntimeEndpoint
	}
	if c.KubeAPIQPS == 0 {
		c.KubeAPIQPS = 50
	}
	if c.KubeAPIBurst == 0 {
		c.KubeAPIBurst = 100
	}
	if c.RuntimeRequestTimeout == 0 {
		c.RuntimeRequestTimeout = 2 * time.Minute
	}
	c.Agent.NodeName = c.NodeName
	c.CRI.NodeName = c.NodeName
	c.CRI.InstanceID = c.InstanceID
	c.CRI.RootDir = c.RootDir
	// The simulated runtime runs nothing that a cgroup would hold: its
	// pods get none, and the host's cgroups are left alone.
	if c.Runtime == RuntimeCRI && c.CRI.CgroupParent == "" && (c.CRI.CgroupsPerQOS == nil || *c.CRI.CgroupsPerQOS) {
		c.CRI.CgroupParent = "/" // the kubelet's cgroupRoot when cgroupsPerQOS is on
	}
	c.CRI.PodLogsDir, c.CRI.ContainerLogsDir = c.PodLogsDir, c.ContainerLogsDir
	c.Logs.InstanceID = c.InstanceID
	c.ImageGC.NodeName = c.NodeName
	c.Eviction.Hard = c.EvictionHard
	c.Shutdown.NodeName, c.Shutdown.StateDirectory = c.NodeName, c.RootDir
	c.Server.NodeName, c.Server.NodeIP, c.Server.RootDir, c.Server.Kubeconfig = c.NodeName, c.Agent.NodeIP, c.RootDir, c.Kubeconfig
	c.Volumes.RootDir = c.RootDir
	c.APISource.NodeName = c.NodeName
	c.HTTPSource.NodeName = c.NodeName
	switch {
	case c.DisablePodCheckpoint:
		c.APISource.CheckpointDir = ""
	case c.APISource.CheckpointDir == "":
		c.APISource.CheckpointDir = filepath.Join(c.RootDir, "pod-checkpoints")
	}
	c.Certificates.NodeName, c.Certificates.Kubeconfig = c.NodeName, c.Kubeconfig
	if c.Certificates.CertDir == "" {
		c.Certificates.CertDir = c.Server.CertDir
	}
	if c.Certificates.CertDir == "" {
		c.Certificates.CertDir = filepath.Join(c.RootDir, "pki")
	}
	// The simulated runtime runs nothing that would read a tmpfs: volumes
	// stay plain directories and nothing is mounted on the host.
	c.Volumes.DiskOnly = c.Volumes.DiskOnly || c.Runtime == RuntimeSim
	if c.Manifests != "" {
		abs, err := filepath.Abs(c.Manifests)
		if err != nil {
			return c, fmt.Errorf("manifests %q: %w", c.Manifests, err)
		}
		c.Manifests = abs
	}
	return c, nil
}

// Validate reports every invalid setting of a completed Config.
func (c Config) Validate() error {
	var errs []error
	switch c.Runtime {
	case RuntimeCRI:
		if c.RuntimeEndpoint == "" {
			errs = append(errs, errors.New("runtimeEndpoint is required (e.g. unix:///run/containerd/containerd.sock)"))
		}
	case RuntimeSim:
		if err := c.Sim.Validate(); err != nil {
			errs = append(errs, err)
		}
	default:
		errs = append(errs, fmt.Errorf("runtime %q: want %q or %q", c.Runtime, RuntimeCRI, RuntimeSim))
	}
	if _, err := c.reservation(); err != nil {
		errs = append(errs, err)
	}
	if _, err := eviction.HardThresholds(c.EvictionHard); err != nil {
		errs = append(errs, fmt.Errorf("evictionHard: %w", err))
	}
	if c.HTTPSource.URL != "" {
		if err := c.HTTPSource.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if !filepath.IsAbs(c.RootDir) {
		errs = append(errs, fmt.Errorf("rootDir %q must be an absolute path", c.RootDir))
	}
	if c.MaxParallelStarts < 0 {
		errs = append(errs, fmt.Errorf("maxParallelStarts %d must not be negative (0 is no limit)", c.MaxParallelStarts))
	}
	for _, v := range []interface{ Validate() error }{c.Agent, c.PLEG, c.PodWorkers, c.CRI, c.Server, c.Prober, c.Volumes, c.Objects, c.Logs, c.ImageGC, c.Eviction, c.Shutdown, c.nodeIPConfig(), c.APISource, c.Certificates} {
		if err := v.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// statusConfig is the status manager's share of the settings.
func (c Config) statusConfig() status.Config {
	return status.Config{NodeName: c.NodeName}
}

// nodeStatusConfig is the node status reporter's share of the settings
// (the reservation and thresholds of a validated Config).
func (c Config) nodeStatusConfig() nodestatus.Config {
	reserved, _ := c.reservation()
	hard, _ := eviction.HardThresholds(c.EvictionHard)
	ns := c.NodeStatus
	ns.NodeName, ns.NodeIP, ns.MaxPods = c.NodeName, c.Agent.NodeIP, c.Agent.MaxPods
	ns.RootDir, ns.KubeletPort, ns.Reserved, ns.EvictionHard = c.RootDir, c.kubeletPort(), reserved, hard
	return ns
}

// reservation is KubeReserved plus SystemReserved.
func (c Config) reservation() (corev1.ResourceList, error) {
	kube, err := nodestatus.ParseReserved(c.KubeReserved)
	if err != nil {
		return nil, fmt.Errorf("kubeReserved: %w", err)
	}
	sys, err := nodestatus.ParseReserved(c.SystemReserved)
	if err != nil {
		return nil, fmt.Errorf("systemReserved: %w", err)
	}
	for name, q := range sys {
		sum := kube[name]
		sum.Add(q)
		kube[name] = sum
	}
	return kube, nil
}

// kubeletPort is the port the node advertises in daemonEndpoints: the
// secure port when it runs (a joined cluster), else the read-only port.
func (c Config) kubeletPort() int {
	if c.Kubeconfig != "" && c.Server.SecurePort != 0 {
		return c.Server.SecurePort
	}
	return c.Server.Port
}

// logDirDefaults fills PodLogsDir and ContainerLogsDir: the kubelet's
// directories, or under RootDir for the simulated runtime, whose agents
// need not run as root and run nothing that logs.
func (c Config) logDirDefaults() Config {
	if c.PodLogsDir == "" {
		c.PodLogsDir = cri.DefaultPodLogsDir
		if c.Runtime == RuntimeSim {
			c.PodLogsDir = filepath.Join(c.RootDir, "logs")
		}
	}
	if c.ContainerLogsDir == "" {
		c.ContainerLogsDir = cri.DefaultContainerLogsDir
		if c.Runtime == RuntimeSim {
			c.ContainerLogsDir = filepath.Join(c.RootDir, "containers")
		}
	}
	return c
}
