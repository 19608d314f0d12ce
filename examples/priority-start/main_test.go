package main

import (
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/agent/startgatetest"
	"github.com/nodekit/nodekit/internal/simharness"
	"github.com/nodekit/nodekit/runtime/sim"
	"github.com/nodekit/nodekit/sources"
)

func pod(name string, prio int32) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name),
			Annotations: map[string]string{sources.AnnotationSource: sources.FileSource}},
		Spec: corev1.PodSpec{Priority: &prio, Containers: []corev1.Container{{Name: "app", Image: "busybox:1"}}},
	}
}

// runOrder adds five pods at once to an agent with gate on a runtime whose
// sandboxes take 2s to create, and returns the order in which they ran and
// when each did (simulated time since the start).
func runOrder(t *testing.T, gate agent.StartGate) ([]string, []time.Duration) {
	h := simharness.New(t, simharness.Options{StartGate: gate,
		Sim: sim.Config{Latency: map[string]sim.Latency{"RunPodSandbox": {Fixed: 2 * time.Second}}}})
	h.Start()
	names := []string{"a", "b", "c", "d", "e"}
	prios := []int32{0, 1000, 10, 0, 500}
	var pods []*corev1.Pod
	for i, n := range names {
		pods = append(pods, pod(n, prios[i]))
	}
	h.Add(pods...)
	var (
		order []string
		at    []time.Duration
	)
	h.StepUntil("every pod running", 2*time.Minute, func() bool {
		for _, n := range names {
			if p := h.Pod(types.UID(n)); p != nil && p.Status.Phase == corev1.PodRunning && !slices.Contains(order, n) {
				order, at = append(order, n), append(at, h.Since())
			}
		}
		return len(order) == len(names)
	})
	return order, at
}

func TestPodsStartHighestPriorityFirstOneAtATime(t *testing.T) {
	got, at := runOrder(t, PriorityStart{MaxStarting: 1})
	if want := []string{"b", "e", "c", "a", "d"}; !slices.Equal(got, want) {
		t.Fatalf("pods ran in the order %v (at %v), want %v (by priority, then age and name)", got, at, want)
	}
	for i := 1; i < len(at); i++ {
		if at[i]-at[i-1] < 2*time.Second {
			t.Fatalf("pods ran at %v: %s started before %s was running", at, got[i], got[i-1])
		}
	}
}

// The default gate starts them all at once: they all run at the same
// moment, so the order above is the swap's doing.
func TestTheDefaultGateStartsThemAllAtOnce(t *testing.T) {
	got, at := runOrder(t, agent.FIFOStart{})
	if at[len(at)-1]-at[0] >= 2*time.Second {
		t.Fatalf("with FIFOStart pods ran in the order %v at %v, want all together", got, at)
	}
}

func TestModuleSwapsTheStartGate(t *testing.T) {
	cfg := nodekit.DefaultConfig()
	cfg.NodeName, cfg.Runtime, cfg.RootDir, cfg.Server.Port = "n", nodekit.RuntimeSim, t.TempDir(), 0
	var gate agent.StartGate
	app := nodekit.New(cfg, logr.Discard(), nodekit.Defaults(), Module(3), fx.Populate(&gate))
	if err := app.Err(); err != nil {
		t.Fatal(err)
	}
	if g, ok := gate.(PriorityStart); !ok || g.MaxStarting != 3 {
		t.Fatalf("gate = %#v, want PriorityStart{3}", gate)
	}
}

// The gate keeps the start gate contract (agent/startgatetest).
func TestPriorityStartPassesTheStartGateSuite(t *testing.T) {
	startgatetest.Suite(t, func() agent.StartGate { return PriorityStart{MaxStarting: 2} })
	startgatetest.Suite(t, func() agent.StartGate { return PriorityStart{} })
}
