package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/textlogger"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/agent"
)

// PriorityStart is an agent.StartGate: highest priority first, and at most
// MaxStarting pods starting (not yet Running) at once; 0 means no limit.
type PriorityStart struct {
	MaxStarting int
}

var _ agent.StartGate = PriorityStart{}

// Order implements agent.StartGate: by priority, then oldest first.
func (PriorityStart) Order(pods []*corev1.Pod) {
	agent.FIFOStart{}.Order(pods)
	sort.SliceStable(pods, func(i, j int) bool { return priority(pods[i]) > priority(pods[j]) })
}

// Ready implements agent.StartGate: the highest-priority waiting pods, as
// many as there is room for.
func (g PriorityStart) Ready(waiting []*corev1.Pod, s agent.StartState) []*corev1.Pod {
	sort.SliceStable(waiting, func(i, j int) bool { return priority(waiting[i]) > priority(waiting[j]) })
	if g.MaxStarting <= 0 {
		return waiting
	}
	return waiting[:max(0, min(len(waiting), g.MaxStarting-len(s.Starting)))]
}

func priority(p *corev1.Pod) int32 {
	if p.Spec.Priority == nil {
		return 0
	}
	return *p.Spec.Priority
}

// Module swaps the agent's start gate for PriorityStart.
func Module(maxStarting int) fx.Option {
	return fx.Decorate(func(agent.StartGate) agent.StartGate { return PriorityStart{MaxStarting: maxStarting} })
}

func main() {
	cfg := nodekit.DefaultConfig()
	n := flag.Int("max-starting", 2, "most pods starting at once, 0 for no limit")
	flag.StringVar(&cfg.Manifests, "manifests", "", "directory of static pod manifests")
	flag.StringVar(&cfg.Runtime, "runtime", nodekit.RuntimeSim, "cri or sim")
	flag.StringVar(&cfg.RuntimeEndpoint, "runtime-endpoint", "", "CRI endpoint")
	flag.StringVar(&cfg.RootDir, "root-dir", cfg.RootDir, "root directory")
	flag.Parse()
	app := nodekit.New(cfg, textlogger.NewLogger(textlogger.NewConfig()), nodekit.Defaults(), Module(*n))
	if err := app.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "priority-start:", err)
		os.Exit(1)
	}
	<-app.Done()
	if err := app.Stop(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "priority-start:", err)
		os.Exit(1)
	}
}
