package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/managers/eviction"
)

// The eviction manager's inputs, faked: a node short of memory and two pods.
type fakeStats struct{ pods []statsapi.PodStats }

func (fakeStats) NodeStats(context.Context, bool) (*statsapi.NodeStats, error) {
	avail, ws := uint64(50<<20), uint64(8<<30) // 50Mi left: below the default 100Mi hard threshold
	return &statsapi.NodeStats{Memory: &statsapi.MemoryStats{AvailableBytes: &avail, WorkingSetBytes: &ws}}, nil
}

func (f fakeStats) ListPodStats(context.Context, bool) ([]statsapi.PodStats, error) {
	return f.pods, nil
}

type fakePods []*corev1.Pod

func (f fakePods) ActivePods() []*corev1.Pod { return f }

type fakeKiller struct{ evicted []string }

func (k *fakeKiller) KillPod(_ context.Context, p *corev1.Pod, _ int64, status func(*corev1.PodStatus)) error {
	st := p.Status.DeepCopy()
	status(st)
	if st.Reason != eviction.Reason {
		return nil
	}
	k.evicted = append(k.evicted, p.Name)
	return nil
}

type noEvents struct{}

func (noEvents) Eventf(apiruntime.Object, string, string, string, ...any) {}

func pod(name, memRequest, cost string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}}
	if memRequest != "" {
		q := resource.MustParse(memRequest)
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: q}, Limits: corev1.ResourceList{corev1.ResourceMemory: q}}
	}
	if cost != "" {
		p.Annotations = map[string]string{CostAnnotation: cost}
	}
	return p
}

func usage(name string, workingSet uint64) statsapi.PodStats {
	return statsapi.PodStats{PodRef: statsapi.PodReference{Name: name, UID: name},
		Memory: &statsapi.MemoryStats{WorkingSetBytes: &workingSet}}
}

// evictOnce runs one monitoring pass of nodekit's eviction manager with
// ranker and returns the pod it evicted.
func evictOnce(t *testing.T, ranker eviction.Ranker) string {
	t.Helper()
	// A Guaranteed pod within its request, marked cheap to evict, and a
	// BestEffort pod using more than its (zero) request.
	pods := fakePods{pod("cheap-batch", "1Gi", "1"), pod("besteffort-web", "", "")}
	stats := fakeStats{pods: []statsapi.PodStats{usage("cheap-batch", 512<<20), usage("besteffort-web", 200<<20)}}
	killer := &fakeKiller{}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m, err := eviction.NewDefault(stats, pods, killer, nil, nil, ranker, noEvents{}, clk, logr.Discard(), eviction.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(killer.evicted) != 1 {
		t.Fatalf("evicted %v, want one pod per pass", killer.evicted)
	}
	return killer.evicted[0]
}

// The same pods, stats and pressure: the kubelet's order evicts the
// BestEffort pod over its request; CostRanker evicts the pod its owner
// marked cheap, though it is Guaranteed and within its request.
func TestCostRankerDecidesWhichPodIsEvicted(t *testing.T) {
	if got := evictOnce(t, nil); got != "besteffort-web" {
		t.Fatalf("the kubelet's ranking evicted %s, want besteffort-web", got)
	}
	if got := evictOnce(t, CostRanker{}); got != "cheap-batch" {
		t.Fatalf("CostRanker evicted %s, want cheap-batch", got)
	}
}

func TestCostRankerKeepsTheFallbackOrderWithinACost(t *testing.T) {
	t.Parallel()
	pods := []*corev1.Pod{pod("a", "", "5"), pod("b", "", ""), pod("c", "", "5"), pod("d", "", "x")}
	reverse := rankerFunc(func(_ eviction.Signal, in []*corev1.Pod, _ map[types.UID]statsapi.PodStats) []*corev1.Pod {
		out := make([]*corev1.Pod, 0, len(in))
		for i := len(in) - 1; i >= 0; i-- {
			out = append(out, in[i])
		}
		return out
	})
	got := CostRanker{Fallback: reverse}.Rank(eviction.SignalMemoryAvailable, pods, nil)
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	if want := "c,a,d,b"; strings.Join(names, ",") != want {
		t.Fatalf("Rank = %s, want %s (cost 5 first in the fallback's order, then the default cost)", strings.Join(names, ","), want)
	}
	if pods[0].Name != "a" {
		t.Fatal("Rank reordered its input")
	}
}

// SwapRanker puts CostRanker in nodekit's graph, where the eviction
// manager takes its Ranker.
func TestSwapRankerReachesTheAgentsGraph(t *testing.T) {
	cfg := nodekit.DefaultConfig()
	cfg.Runtime, cfg.NodeName, cfg.RootDir, cfg.Manifests = nodekit.RuntimeSim, "sim-node", filepath.Join(t.TempDir(), "root"), t.TempDir()
	cfg.Server.Port = 0
	var r eviction.Ranker
	var m eviction.Manager
	app := nodekit.New(cfg, logr.Discard(), nodekit.Defaults(), SwapRanker(), fx.Populate(&r, &m))
	if err := app.Err(); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.(CostRanker); !ok {
		t.Fatalf("the graph's Ranker is a %T, want CostRanker", r)
	}
	if m == nil {
		t.Fatal("no eviction manager in the graph")
	}
}

type rankerFunc func(eviction.Signal, []*corev1.Pod, map[types.UID]statsapi.PodStats) []*corev1.Pod

func (f rankerFunc) Rank(s eviction.Signal, p []*corev1.Pod, st map[types.UID]statsapi.PodStats) []*corev1.Pod {
	return f(s, p, st)
}
