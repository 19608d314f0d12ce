package nodekit_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/fx"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/pleg"
)

// Config.PLEG.Kind picks the PLEG the agent runs; with "evented" on the
// simulated runtime, a crashing container is restarted through events.
func TestConfigPLEGKindPicksThePLEG(t *testing.T) {
	tests := []struct {
		name string
		kind pleg.Kind
		want string
	}{
		{name: "the default is the generic PLEG", want: "*pleg.Generic"},
		{name: "evented runs the evented PLEG on the runtime's event stream", kind: pleg.KindEvented, want: "*pleg.Evented"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			manifests := filepath.Join(dir, "manifests")
			if err := os.MkdirAll(manifests, 0o755); err != nil {
				t.Fatal(err)
			}
			const pod = `apiVersion: v1
kind: Pod
metadata:
  name: crashy
  annotations:
    sim.nodekit.io/app.exit-after: "300ms"
    sim.nodekit.io/app.exit-code: "1"
spec:
  containers:
  - name: app
    image: sim/busybox:1
`
			if err := os.WriteFile(filepath.Join(manifests, "crashy.yaml"), []byte(pod), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := nodekit.DefaultConfig()
			cfg.Runtime, cfg.NodeName, cfg.RootDir, cfg.Manifests = nodekit.RuntimeSim, "sim-node", filepath.Join(dir, "root"), manifests
			cfg.Server.Port = 0
			cfg.CRI.InitialBackOff = 100 * time.Millisecond
			cfg.PLEG.Kind = tt.kind
			var (
				plg pleg.Interface
				a   *agent.Agent
			)
			app := nodekit.New(cfg, logr.Discard(), nodekit.Defaults(), fx.Populate(&plg, &a))
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
			if got := typeName(plg); got != tt.want {
				t.Fatalf("the agent runs a %s, want a %s", got, tt.want)
			}
			for !restarted(a) {
				if ctx.Err() != nil {
					t.Fatalf("the crashing container was not restarted: %+v", a.GetPods())
				}
				time.Sleep(10 * time.Millisecond)
			}
			if e, ok := plg.(*pleg.Evented); ok {
				if e.Mode() != pleg.ModeEvents || e.EventsReceived() == 0 || e.MissedEvents() != 0 {
					t.Errorf("evented PLEG: mode %s, %d events received, %d missed; want events, some, none",
						e.Mode(), e.EventsReceived(), e.MissedEvents())
				}
			}
		})
	}
}

func typeName(v any) string {
	switch v.(type) {
	case *pleg.Generic:
		return "*pleg.Generic"
	case *pleg.Evented:
		return "*pleg.Evented"
	default:
		return "another type"
	}
}

func restarted(a *agent.Agent) bool {
	for _, p := range a.GetPods() {
		for _, c := range p.Status.ContainerStatuses {
			if c.RestartCount >= 1 && c.State.Running != nil {
				return true
			}
		}
	}
	return false
}
