package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/textlogger"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/managers/eviction"
)

// CostAnnotation is the annotation that sets a pod's eviction cost.
const CostAnnotation = "eviction.example.nodekit.io/cost"

// DefaultCost is the cost of a pod without a valid CostAnnotation.
const DefaultCost = 100

// CostRanker evicts the pod of the lowest cost first; among pods of equal
// cost, Fallback's order stands (the kubelet's when nil).
type CostRanker struct {
	Fallback eviction.Ranker
}

var _ eviction.Ranker = CostRanker{}

// Rank implements eviction.Ranker.
func (r CostRanker) Rank(signal eviction.Signal, pods []*corev1.Pod, stats map[types.UID]statsapi.PodStats) []*corev1.Pod {
	fallback := r.Fallback
	if fallback == nil {
		fallback = eviction.KubeletRanker{}
	}
	out := fallback.Rank(signal, pods, stats)
	sort.SliceStable(out, func(i, j int) bool { return cost(out[i]) < cost(out[j]) })
	return out
}

func cost(p *corev1.Pod) int {
	if c, err := strconv.Atoi(p.Annotations[CostAnnotation]); err == nil {
		return c
	}
	return DefaultCost
}

// SwapRanker is the whole swap: the eviction manager takes its Ranker
// from the graph, and this supplies CostRanker as one.
func SwapRanker() fx.Option {
	return fx.Supply(fx.Annotate(CostRanker{}, fx.As(new(eviction.Ranker))))
}

func main() {
	cfg := nodekit.DefaultConfig()
	flag.StringVar(&cfg.Manifests, "manifests", "", "directory of static pod manifests")
	flag.StringVar(&cfg.RuntimeEndpoint, "runtime-endpoint", "", "CRI endpoint")
	flag.StringVar(&cfg.NodeName, "node-name", "", "node name (default: hostname)")
	flag.StringVar(&cfg.RootDir, "root-dir", cfg.RootDir, "root directory")
	flag.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubeconfig of the API server, empty for none")
	flag.StringVar(&cfg.EvictionHard, "eviction-hard", eviction.DefaultHard, "hard eviction thresholds")
	flag.IntVar(&cfg.Server.Port, "port", cfg.Server.Port, "HTTP port, 0 for none")
	flag.Parse()
	log := textlogger.NewLogger(textlogger.NewConfig())
	app := nodekit.New(cfg, log, nodekit.Defaults(), SwapRanker())
	if err := app.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "eviction-ranking:", err)
		os.Exit(1)
	}
	<-app.Done()
	if err := app.Stop(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "eviction-ranking:", err)
		os.Exit(1)
	}
}
