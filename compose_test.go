package nodekit_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/managers/eviction"
	"github.com/nodekit/nodekit/managers/images"
	"github.com/nodekit/nodekit/managers/logs"
	"github.com/nodekit/nodekit/managers/nodestatus"
	"github.com/nodekit/nodekit/managers/objects"
	"github.com/nodekit/nodekit/managers/prober"
	"github.com/nodekit/nodekit/managers/stats"
	"github.com/nodekit/nodekit/managers/status"
	"github.com/nodekit/nodekit/managers/volumes"
	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/podworkers"
	"github.com/nodekit/nodekit/runnable"
	"github.com/nodekit/nodekit/runtime/cri"
	"github.com/nodekit/nodekit/server"
	"github.com/nodekit/nodekit/sources"
)

const simPod = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: busybox:1
`

// simConfig is a sim-runtime agent with one static pod, no ports.
func simConfig(t *testing.T) nodekit.Config {
	cfg := nodekit.DefaultConfig()
	cfg.NodeName, cfg.Runtime, cfg.RootDir, cfg.Server.Port = "sim-node", nodekit.RuntimeSim, t.TempDir(), 0
	cfg.Manifests = t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg.Manifests, "web.yaml"), []byte(simPod), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// defaultsWithout is Defaults() with the modules for which leave is true
// left out, in Defaults' order.
func defaultsWithout(leave func(name string) bool) fx.Option {
	all := []struct {
		name string
		mod  fx.Option
	}{
		{"agent", agent.Module}, {"pleg", pleg.Module}, {"podworkers", podworkers.Module}, {"cri", cri.Module},
		{"sources", sources.Module}, {"status", status.Module}, {"nodestatus", nodestatus.Module},
		{"server", server.Module}, {"prober", prober.Module}, {"objects", objects.Module},
		{"volumes", volumes.Module}, {"stats", stats.Module}, {"logs", logs.Module},
		{"images", images.Module}, {"eviction", eviction.Module},
	}
	var out []fx.Option
	for _, m := range all {
		if !leave(m.name) {
			out = append(out, m.mod)
		}
	}
	return fx.Options(out...)
}

// runUntilRunning starts app, waits (polling, real clock) until lister shows
// the static pod Running, and stops it.
func runUntilRunning(t *testing.T, app *fx.App, lister *server.PodLister) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	defer func() {
		if err := app.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, p := range (*lister).GetPods() {
			if p.Name == "web-sim-node" && p.Status.Phase == corev1.PodRunning {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the static pod did not run: %v", (*lister).GetPods())
		case <-tick.C:
		}
	}
}

func TestAnAppWithoutTheServerOrWithoutTheProberRunsAPodOnTheSimulatedRuntime(t *testing.T) {
	for _, left := range []string{"server", "prober"} {
		t.Run("without "+left, func(t *testing.T) {
			var lister server.PodLister
			app := nodekit.New(simConfig(t), testr.New(t), defaultsWithout(func(n string) bool { return n == left }), fx.Populate(&lister))
			if err := app.Err(); err != nil {
				t.Fatalf("build without %s: %v", left, err)
			}
			runUntilRunning(t, app, &lister)
		})
	}
}

// An embedder's goroutine joins the runnables group as every subsystem
// does: it runs when the app starts and is cancelled when it stops.
func TestAnEmbeddersRunnableRunsWithTheAppAndStopsWithIt(t *testing.T) {
	started, stopped := make(chan struct{}), make(chan struct{})
	mine := fx.Provide(runnable.As(func() runnable.Runnable {
		return runnable.Runnable{Name: "mine", Run: func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			close(stopped)
			return nil
		}}
	}))
	var lister server.PodLister
	app := nodekit.New(simConfig(t), testr.New(t), nodekit.Defaults(), mine, fx.Populate(&lister))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the embedder's runnable did not start")
	}
	select {
	case <-stopped:
		t.Fatal("the runnable stopped before the app did")
	default:
	}
	if err := app.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	select {
	case <-stopped:
	default:
		t.Fatal("Stop returned before the runnable did")
	}
}
