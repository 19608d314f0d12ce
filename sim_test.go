package nodekit_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"go.uber.org/fx"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/managers/objects"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/sim"
)

func TestTheSimulatedRuntimeRunsInProcessAndSaysSo(t *testing.T) {
	var (
		mu   sync.Mutex
		logs strings.Builder
	)
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		logs.WriteString(prefix + " " + args + "\n")
	}, funcr.Options{})
	cfg := nodekit.DefaultConfig()
	cfg.Runtime = nodekit.RuntimeSim
	cfg.NodeName = "sim-node"
	cfg.RootDir = t.TempDir()
	cfg.Server.Port = 0
	var rt noderuntime.Runtime
	app := nodekit.New(cfg, log, nodekit.Defaults(), fx.Populate(&rt))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	v, err := rt.Version(ctx)
	if stopErr := app.Stop(ctx); stopErr != nil {
		t.Errorf("stop: %v", stopErr)
	}
	if err != nil || v.RuntimeName != sim.RuntimeName || v.RuntimeVersion != sim.RuntimeVersion || rt.Type() != "sim" {
		t.Fatalf("runtime %q version %+v, %v; want the simulated runtime", rt.Type(), v, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "SIMULATED runtime") {
		t.Fatalf("start-up did not log that the runtime is simulated:\n%s", logs.String())
	}
}

func TestConfigRuntime(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*nodekit.Config)
		wantErr string
	}{
		{"cri is the default and needs an endpoint", func(*nodekit.Config) {}, "runtimeEndpoint is required"},
		{"cri with an endpoint is valid", func(c *nodekit.Config) { c.RuntimeEndpoint = "unix:///run/x.sock" }, ""},
		{"sim needs no endpoint", func(c *nodekit.Config) { c.Runtime = nodekit.RuntimeSim }, ""},
		{"sim checks its own config", func(c *nodekit.Config) {
			c.Runtime = nodekit.RuntimeSim
			c.Sim.Latency = map[string]sim.Latency{"Nope": {}}
		}, `unknown CRI method "Nope"`},
		{"another runtime is rejected", func(c *nodekit.Config) { c.Runtime = "docker" }, `runtime "docker"`},
		{"a start limit is valid", func(c *nodekit.Config) { c.Runtime, c.MaxParallelStarts = nodekit.RuntimeSim, 8 }, ""},
		{"a negative start limit is rejected", func(c *nodekit.Config) { c.Runtime, c.MaxParallelStarts = nodekit.RuntimeSim, -1 }, "maxParallelStarts -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := nodekit.DefaultConfig()
			cfg.NodeName = "n"
			tc.mutate(&cfg)
			cfg, err := cfg.Complete()
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.Validate()
			if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Validate() = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestTheSimulatedRuntimesVolumesMountNothing(t *testing.T) {
	for runtime, want := range map[string]bool{nodekit.RuntimeSim: true, nodekit.RuntimeCRI: false} {
		cfg := nodekit.DefaultConfig()
		cfg.NodeName, cfg.Runtime = "n", runtime
		cfg, err := cfg.Complete()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Volumes.DiskOnly != want {
			t.Errorf("runtime %q: volumes DiskOnly = %t, want %t", runtime, cfg.Volumes.DiskOnly, want)
		}
	}
}

func TestTheObjectsConfigIsValidatedAndSupplied(t *testing.T) {
	cfg := nodekit.DefaultConfig()
	cfg.NodeName, cfg.Runtime, cfg.RootDir = "n", nodekit.RuntimeSim, t.TempDir()
	cfg.Server.Port = 0
	bad := cfg
	bad.Objects.SyncWait = -time.Second
	if bad, err := bad.Complete(); err != nil || bad.Validate() == nil || !strings.Contains(bad.Validate().Error(), "syncWait") {
		t.Fatalf("a negative objects syncWait: Complete %v, Validate %v; want an error naming it", err, bad.Validate())
	}
	cfg.Objects.SyncWait = 3 * time.Second
	var got objects.Config
	app := nodekit.New(cfg, logr.Discard(), nodekit.Defaults(), fx.Populate(&got))
	if err := app.Err(); err != nil {
		t.Fatal(err)
	}
	if got.SyncWait != 3*time.Second {
		t.Fatalf("the objects module got %+v, want syncWait 3s", got)
	}
}
