package cri

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/flowcontrol"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/managers/nodeip"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// defaultType is what Type returns before Version has answered once.
const defaultType = "cri"

// criAPIVersion is the API version sent with Version requests.
const criAPIVersion = "v1"

var (
	_ noderuntime.Runtime          = (*Manager)(nil)
	_ noderuntime.GarbageCollector = (*Manager)(nil)
	_ noderuntime.ProbeAware       = (*Manager)(nil)
	_ noderuntime.LivenessAware    = (*Manager)(nil)
	_ noderuntime.VolumeAware      = (*Manager)(nil)
)

// Manager is the CRI runtime manager: nodekit's default runtime.Runtime and
// runtime.GarbageCollector, driving any CRI v1 runtime (containerd, CRI-O)
// through the k8s.io/cri-api service interfaces.
//
// All methods are safe for concurrent use; the agent must not call SyncPod or
// KillPod for the same pod concurrently (the pod workers guarantee it).
type Manager struct {
	rs  criapi.RuntimeService
	is  criapi.ImageManagerService
	clk clock.WithTicker
	log logr.Logger
	cfg Config

	// backOff holds the CrashLoopBackOff state of every container; it has
	// its own lock.
	backOff *flowcontrol.Backoff
	// pulls, cgroups and host serve the image pulls, the pod cgroups and
	// the machine facts of resources.go; each has its own lock.
	pulls   *puller
	cgroups *podCgroups
	host    *hostFacts

	mu          sync.RWMutex
	runtimeName string
	startup     noderuntime.StartupResults
	liveness    noderuntime.LivenessResults
	preStop     noderuntime.PreStopRunner
	rec         noderuntime.EventRecorder
	volumes     noderuntime.VolumeGetter
	envSource   EnvSource
	nodeIPs     nodeip.Source // nil: Config.NodeIPs
	// hooks runs lifecycle hooks (and preStop hooks unless preStop is set).
	hooks *hookRunner
	// classes resolves pods' RuntimeClasses; it has its own lock.
	classes runtimeClasses
	// lists caches what GetPods decoded from listed objects; it has its
	// own locks.
	lists listCaches
	// split says when GetPods lists pod by pod; it has its own lock.
	split listSplit
}

// NewManager returns a manager over the given CRI services. It does no I/O:
// the first call that needs the runtime is the first to reach it. cfg is used
// with its defaults filled in; call cfg.Validate first.
func NewManager(rs criapi.RuntimeService, is criapi.ImageManagerService, clk clock.WithTicker, log logr.Logger, cfg Config) *Manager {
	cfg = cfg.withDefaults()
	bo := flowcontrol.NewFakeBackOff(cfg.InitialBackOff, cfg.MaxBackOff, clk)
	resetAfter := cfg.BackOffResetAfter
	bo.HasExpiredFunc = func(eventTime, lastUpdate time.Time, _ time.Duration) bool {
		return eventTime.Sub(lastUpdate) > resetAfter
	}
	return &Manager{
		rs:      rs,
		is:      is,
		clk:     clk,
		log:     log.WithName("cri"),
		cfg:     cfg,
		backOff: bo,
		pulls:   newPuller(cfg, clk),
		cgroups: newPodCgroups(cfg, log.WithName("cri")),
		host:    newHostFacts(),
		hooks:   newHookRunner(rs, clk),
	}
}

// Type returns the runtime's name as its first successful Version call
// reported it ("containerd"), or "cri" before that. It does not block.
func (m *Manager) Type() string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.runtimeName == "" {
		return defaultType
	}
	return m.runtimeName
}

// Version asks the runtime for its name and version, and remembers the name
// for Type.
func (m *Manager) Version(ctx context.Context) (*noderuntime.VersionInfo, error) {
	resp, err := m.rs.Version(ctx, criAPIVersion)
	if err != nil {
		return nil, fmt.Errorf("runtime version: %w", err)
	}
	if resp.GetRuntimeName() != "" {
		m.mu.Lock()
		if m.runtimeName == "" {
			m.runtimeName = resp.GetRuntimeName()
		}
		m.mu.Unlock()
	}
	return &noderuntime.VersionInfo{
		RuntimeName:    resp.GetRuntimeName(),
		RuntimeVersion: resp.GetRuntimeVersion(),
		APIVersion:     resp.GetRuntimeApiVersion(),
	}, nil
}

// Status reports the runtime's RuntimeReady and NetworkReady conditions;
// other conditions (such as containerd 2's deprecation warnings) are ignored.
// Message explains each of the two that is false.
func (m *Manager) Status(ctx context.Context) (*noderuntime.RuntimeStatus, error) {
	resp, err := m.rs.Status(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("runtime status: %w", err)
	}
	if resp.GetStatus() == nil {
		return nil, errors.New("runtime status: runtime returned no status")
	}
	out := &noderuntime.RuntimeStatus{}
	var msgs []string
	for _, c := range resp.GetStatus().GetConditions() {
		var target *bool
		switch c.GetType() {
		case runtimeapi.RuntimeReady:
			target = &out.Ready
		case runtimeapi.NetworkReady:
			target = &out.NetworkReady
		default:
			continue
		}
		*target = c.GetStatus()
		if !c.GetStatus() {
			msg := fmt.Sprintf("%s=false reason:%s message:%s", c.GetType(), c.GetReason(), c.GetMessage())
			msgs = append(msgs, msg)
			if c.GetType() == runtimeapi.NetworkReady {
				out.NetworkMessage = msg
			}
		}
	}
	if !out.Ready && len(msgs) == 0 {
		msgs = append(msgs, runtimeapi.RuntimeReady+" condition missing")
	}
	if !out.NetworkReady && out.NetworkMessage == "" {
		out.NetworkMessage = runtimeapi.NetworkReady + " condition missing"
	}
	out.Message = strings.Join(msgs, "; ")
	return out, nil
}

// SetStartupResults implements runtime.ProbeAware: a sidecar with a startup
// probe counts as started only once results reports success (and is
// restarted when it reports failure). Without results (nil), a running
// sidecar counts as started. Safe for concurrent use.
func (m *Manager) SetStartupResults(results noderuntime.StartupResults) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.startup = results
}

// SetPreStopRunner implements runtime.ProbeAware: runner runs each
// container's preStop hook before it is stopped, inside its grace period.
// Without a runner (nil), the manager runs exec, httpGet and sleep hooks
// itself. Safe for concurrent use.
func (m *Manager) SetPreStopRunner(runner noderuntime.PreStopRunner) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.preStop = runner
}

// SetLivenessResults implements runtime.LivenessAware: a running container
// whose liveness probe failed for good, per results, is killed and, as its
// restart policy allows, started again. Without results (nil) no container
// is killed for its liveness. Safe for concurrent use.
func (m *Manager) SetLivenessResults(results noderuntime.LivenessResults) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.liveness = results
}

// probes returns what computePodActions learns from the probes.
func (m *Manager) probes() probeResults {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return managerProbes{startup: m.startup, liveness: m.liveness}
}

// managerProbes is the probeResults of the results set on the manager.
type managerProbes struct {
	startup  noderuntime.StartupResults
	liveness noderuntime.LivenessResults
}

// startupResult implements probeResults: a container without a startup
// probe, or any container without results, has started.
func (p managerProbes) startupResult(c *corev1.Container, cs *noderuntime.ContainerStatus) noderuntime.StartupResult {
	if p.startup == nil || c.StartupProbe == nil {
		return noderuntime.StartupSucceeded
	}
	return p.startup.StartupResult(cs.ID)
}

// livenessFailed implements probeResults.
func (p managerProbes) livenessFailed(c *corev1.Container, cs *noderuntime.ContainerStatus) bool {
	return p.liveness != nil && c.LivenessProbe != nil && p.liveness.LivenessFailed(cs.ID)
}

// preStopRunner returns the preStop runner, or the built-in one.
func (m *Manager) preStopRunner() noderuntime.PreStopRunner {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.preStop == nil {
		return builtinPreStop{m}
	}
	return m.preStop
}

// containerID qualifies a runtime ID with the runtime's type.
func (m *Manager) containerID(id string) noderuntime.ContainerID {
	return noderuntime.ContainerID{Type: m.Type(), ID: id}
}

// ownLabels is the label selector that matches this instance's objects,
// extended with extra key/value pairs.
func (m *Manager) ownLabels(extra ...string) map[string]string {
	sel := map[string]string{noderuntime.LabelInstance: m.cfg.InstanceID}
	for i := 0; i+1 < len(extra); i += 2 {
		sel[extra[i]] = extra[i+1]
	}
	return sel
}
