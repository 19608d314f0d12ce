package nodekit_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/managers/shutdown"
	"github.com/nodekit/nodekit/managers/status"
)

// chanTrigger is a shutdown.Trigger the test fires.
type chanTrigger struct{ ch chan bool }

func (c chanTrigger) Watch(context.Context) (<-chan bool, error) { return c.ch, nil }
func (chanTrigger) Release() error                               { return nil }

// safeLog collects the agent's log lines.
type safeLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *safeLog) write(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(prefix + " " + args + "\n")
}

func (l *safeLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func simShutdownConfig(t *testing.T) nodekit.Config {
	cfg := nodekit.DefaultConfig()
	cfg.Runtime = nodekit.RuntimeSim
	cfg.NodeName = "sim-node"
	cfg.RootDir = t.TempDir()
	cfg.Server.Port = 0
	cfg.Shutdown.GracePeriod = 10 * time.Second
	cfg.Shutdown.GracePeriodCriticalPods = 5 * time.Second
	return cfg
}

func startApp(t *testing.T, app *fx.App) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := app.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
}

func TestTheDefaultShutdownTriggerSaysWhyItIsUnavailableAndTheAgentRuns(t *testing.T) {
	log := &safeLog{}
	var m shutdown.Manager
	app := nodekit.New(simShutdownConfig(t), funcr.New(log.write, funcr.Options{}), nodekit.Defaults(), fx.Populate(&m))
	startApp(t, app)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(log.String(), "graceful node shutdown unavailable"); {
		if time.Now().After(deadline) {
			t.Fatalf("no log of the unavailable trigger:\n%s", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(log.String(), "Cannot watch the node for shutdown events") {
		t.Errorf("the log does not say graceful shutdown cannot run:\n%s", log.String())
	}
	if err := app.Err(); err != nil || m.ShutdownStatus() != nil {
		t.Errorf("app error %v, shutdown status %v: the agent must keep running, not shutting down", err, m.ShutdownStatus())
	}
}

func TestAShutdownTriggerKillsTheAgentsPodsThroughThePodWorkers(t *testing.T) {
	cfg := simShutdownConfig(t)
	cfg.Manifests = filepath.Join(t.TempDir(), "manifests")
	if err := os.MkdirAll(cfg.Manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.Shutdown.GracePeriod, cfg.Shutdown.GracePeriodCriticalPods = 2*time.Second, time.Second
	// The simulated container ignores SIGTERM, so it ends killed (137)
	// when its 1s runs out: Failed, as a real one that does.
	manifest := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations:\n    sim.nodekit.io/c.ignore-term: \"true\"\n" +
		"spec:\n  containers:\n  - name: c\n    image: busybox\n"
	if err := os.WriteFile(filepath.Join(cfg.Manifests, "web.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	trig := chanTrigger{ch: make(chan bool)}
	var (
		a        *agent.Agent
		statuses status.Manager
	)
	log := &safeLog{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("agent log:\n%s", log.String())
		}
	})
	app := nodekit.New(cfg, funcr.New(log.write, funcr.Options{Verbosity: 4}), nodekit.Defaults(),
		fx.Decorate(func(shutdown.Trigger) shutdown.Trigger { return trig }), fx.Populate(&a, &statuses))
	startApp(t, app)
	waitStatus(t, a, statuses, "running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	select {
	case trig.ch <- true:
	case <-time.After(30 * time.Second):
		t.Fatal("the shutdown manager does not watch the decorated trigger")
	}
	st := waitStatus(t, a, statuses, "terminated for the shutdown", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodFailed })
	if st.Reason != shutdown.Reason || st.Message != shutdown.Message {
		t.Errorf("pod ended with reason %q message %q", st.Reason, st.Message)
	}
}

// waitStatus polls the status manager until the agent's only pod has a
// status cond accepts.
func waitStatus(t *testing.T, a *agent.Agent, statuses status.Manager, what string, cond func(*corev1.PodStatus) bool) *corev1.PodStatus {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		pods := a.GetPods()
		if len(pods) != 1 {
			continue
		}
		if s, ok := statuses.GetPodStatus(pods[0].UID); ok && cond(s) {
			return s
		}
	}
	t.Fatalf("the static pod never became %s", what)
	return nil
}
