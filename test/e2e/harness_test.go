//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/internal/mount"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// agentHarness runs a whole nodekit agent in-process against the private
// containerd, with its own manifest directory, root dir, instance id and
// server port, so that tests never touch each other's pods.
type agentHarness struct {
	t         testing.TB
	env       testEnv
	manifests string
	rootDir   string
	// logLinks is the agent's ContainerLogsDir; its PodLogsDir is
	// rootDir/logs. Several agents share the machine: no test writes the
	// node's /var/log unless it means to.
	logLinks string
	node     string
	port     int
	// securePort is the kubelet API port (it serves only when joined).
	securePort int
	app        *fx.App
	logs       *syncBuffer
	// kubeconfig, when set, joins the agent to the private control plane.
	kubeconfig string
	// clientCAFile verifies client certificates on the secure port (the
	// API server's kubelet client certificate), as kubeadm's clientCAFile.
	clientCAFile string
	// configure, when set, changes the agent's configuration before start.
	configure func(*nodekit.Config)
}

// newAgentHarness prepares (but does not start) an agent for one test.
func newAgentHarness(t testing.TB) *agentHarness {
	t.Helper()
	return newAgentHarnessOn(t, loadEnv(t))
}

// newAgentHarnessOn prepares an agent for one test on the runtime of env
// (the shared lab's, or a disruptable one: see loadFaultLab).
func newAgentHarnessOn(t testing.TB, env testEnv) *agentHarness {
	t.Helper()
	dir := t.TempDir()
	h := &agentHarness{
		t: t, env: env, manifests: filepath.Join(dir, "manifests"), rootDir: filepath.Join(dir, "root"),
		logLinks: filepath.Join(dir, "containers"),
		node:     strings.ToLower(fmt.Sprintf("e2e-%s-%d", sanitize(t.Name()), time.Now().UnixNano()%100000)),
		logs:     &syncBuffer{},
	}
	if err := os.MkdirAll(h.manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.cleanup)
	return h
}

func sanitize(name string) string {
	r := strings.NewReplacer("/", "-", "_", "-")
	name = r.Replace(strings.ToLower(name))
	if len(name) > 30 {
		name = name[len(name)-30:]
	}
	return strings.Trim(name, "-")
}

func (h *agentHarness) config() nodekit.Config {
	cfg := nodekit.DefaultConfig()
	cfg.NodeName = h.node
	cfg.RootDir = h.rootDir
	cfg.PodLogsDir, cfg.ContainerLogsDir = filepath.Join(h.rootDir, "logs"), h.logLinks
	cfg.RuntimeEndpoint = h.env.Endpoint
	cfg.Manifests = h.manifests
	cfg.CRI.CgroupParent = h.env.CgroupParent
	cfg.Agent.NodeIP = "127.0.0.1"
	cfg.Server.Port = h.port
	cfg.Server.SecurePort = h.securePort
	cfg.Kubeconfig = h.kubeconfig
	cfg.Server.ClientCAFile = h.clientCAFile
	// The lab's containerd is shared: no test agent may collect images
	// other tests need (the image GC test runs its own GC with a filter).
	cfg.ImageGC.HighThresholdPercent, cfg.ImageGC.LowThresholdPercent = 100, 99
	// Nor may a full shared disk make every test agent evict pods and
	// reclaim shared images: eviction tests set their own thresholds.
	cfg.EvictionHard = "none"
	if h.configure != nil {
		h.configure(&cfg)
	}
	return cfg
}

// start runs the agent; it can be called again after stop.
func (h *agentHarness) start() {
	h.t.Helper()
	h.port = freePort(h.t)
	h.securePort = freePort(h.t)
	log := funcr.New(func(prefix, args string) {
		h.logs.WriteString(time.Now().Format("15:04:05.000") + " " + prefix + " " + args + "\n")
	}, funcr.Options{Verbosity: 4})
	h.app = nodekit.New(h.config(), log, nodekit.Defaults())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.app.Start(ctx); err != nil {
		h.t.Fatalf("start agent: %v", err)
	}
}

// stop stops the agent, leaving its containers running.
func (h *agentHarness) stop() {
	h.t.Helper()
	if h.app == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.app.Stop(ctx); err != nil {
		h.t.Errorf("stop agent: %v", err)
	}
	h.app = nil
}

// cleanup stops the agent and removes every sandbox it created.
func (h *agentHarness) cleanup() {
	h.stop()
	if h.t.Failed() {
		h.t.Logf("agent log:\n%s", h.logs.String())
	}
	rs := h.env.runtime(h.t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sbs, err := rs.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{noderuntime.LabelInstance: h.node}})
	if err != nil {
		h.t.Logf("cleanup: list sandboxes: %v", err)
		return
	}
	for _, sb := range sbs {
		_ = rs.StopPodSandbox(ctx, sb.Id)
		_ = rs.RemovePodSandbox(ctx, sb.Id)
	}
	// The stopped agent leaves its volumes mounted (secret, projected and
	// token volumes are tmpfs), as the kubelet does: unmount them so the
	// test's directory can go.
	if _, err := os.Stat(h.rootDir); err == nil {
		if err := mount.UnmountBelow(h.rootDir); err != nil {
			h.t.Logf("cleanup: unmount volumes: %v", err)
		}
	}
}

// writeManifest writes a manifest file into the agent's directory.
func (h *agentHarness) writeManifest(name, content string) {
	h.t.Helper()
	tmp := filepath.Join(h.manifests, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(h.manifests, name)); err != nil {
		h.t.Fatal(err)
	}
}

// pods reads the agent's /pods.
func (h *agentHarness) pods() ([]corev1.Pod, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/pods", h.port))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var list corev1.PodList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// waitPod polls /pods until the static pod named name (without the node
// suffix) satisfies cond, and returns it; it fails the test at the deadline.
func (h *agentHarness) waitPod(name string, timeout time.Duration, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	h.t.Helper()
	full := name + "-" + h.node
	var last *corev1.Pod
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		pods, err := h.pods()
		if err == nil {
			for i := range pods {
				if pods[i].Name == full {
					last = &pods[i]
					if cond(last) {
						return last
					}
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	h.t.Fatalf("pod %s: %s did not happen within %s; last seen: %s", full, what, timeout, describe(last))
	return nil
}

// runningContainers lists the running containers of this agent's pods.
func (h *agentHarness) runningContainers() []*runtimeapi.Container {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := h.env.runtime(h.t).ListContainers(ctx, &runtimeapi.ContainerFilter{
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{noderuntime.LabelInstance: h.node}})
	if err != nil {
		h.t.Fatalf("list containers: %v", err)
	}
	return cs
}

func describe(p *corev1.Pod) string {
	if p == nil {
		return "not listed"
	}
	b, _ := json.Marshal(p.Status)
	return fmt.Sprintf("uid %s status %s", p.UID, b)
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var _ logr.Logger
