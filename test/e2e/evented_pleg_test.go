//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/pleg"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// startEvented runs the harness's agent with the evented PLEG (settings
// from evented) and returns that PLEG.
func (h *agentHarness) startEvented(evented pleg.EventedConfig) *pleg.Evented {
	h.t.Helper()
	h.port = freePort(h.t)
	log := funcr.New(func(prefix, args string) {
		h.logs.WriteString(time.Now().Format("15:04:05.000") + " " + prefix + " " + args + "\n")
	}, funcr.Options{Verbosity: 4})
	cfg := h.config()
	cfg.PLEG.Kind, cfg.PLEG.Evented = pleg.KindEvented, evented
	var plg pleg.Interface
	h.app = nodekit.New(cfg, log, nodekit.Defaults(), fx.Populate(&plg))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.app.Start(ctx); err != nil {
		h.t.Fatalf("start agent: %v", err)
	}
	e, ok := plg.(*pleg.Evented)
	if !ok {
		h.t.Fatalf("the agent runs a %T, want the evented PLEG", plg)
	}
	return e
}

// sleeperPod is a one-container pod that runs until stopped.
func sleeperPod(image, name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
`, name, image)
}

func runningMain(p *corev1.Pod) bool {
	cs := p.Status.ContainerStatuses
	return p.Status.Phase == corev1.PodRunning && len(cs) == 1 && cs[0].State.Running != nil
}

// TestEventedPLEGRestartsAContainerKilledFromOutside: with the evented PLEG
// on containerd, a container stopped behind the agent's back is restarted,
// the exit reaching the agent through the event stream.
func TestEventedPLEGRestartsAContainerKilledFromOutside(t *testing.T) {
	h := newAgentHarness(t)
	e := h.startEvented(pleg.EventedConfig{})
	h.writeManifest("victim.yaml", sleeperPod(h.env.Image, "victim"))
	p := h.waitPod("victim", time.Minute, "the container to run", runningMain)
	id, err := noderuntime.ParseContainerID(p.Status.ContainerStatuses[0].ContainerID)
	if err != nil {
		t.Fatal(err)
	}
	inspections := e.EventInspections()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.env.runtime(t).StopContainer(ctx, id.ID, 0); err != nil {
		t.Fatalf("stop container %s: %v", id.ID, err)
	}
	h.waitPod("victim", time.Minute, "the killed container to be restarted", func(p *corev1.Pod) bool {
		return runningMain(p) && p.Status.ContainerStatuses[0].RestartCount == 1
	})
	if e.Mode() != pleg.ModeEvents || e.MissedEvents() != 0 || e.EventsReceived() == 0 {
		t.Errorf("evented PLEG: mode %s, %d missed, %d received; want events, 0, some", e.Mode(), e.MissedEvents(), e.EventsReceived())
	}
	// A relist (one for waiting pod workers, say) that lists a change
	// before its event arrives inspects the pod, rightly: only the
	// inspections made on an event must be none.
	if n := e.EventInspections() - inspections; n != 0 {
		t.Errorf("the PLEG inspected pods %d times on an event; the events carry the statuses", n)
	}
}
