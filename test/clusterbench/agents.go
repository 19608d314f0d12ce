package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"go.uber.org/fx"

	"github.com/nodekit/nodekit"
)

// agentsOptions are the flags of the agents subcommand, which the
// benchmark runs as its child: N nodekit agents in one process.
type agentsOptions struct {
	work        string // holds creds/<node>.kubeconfig; nodes/<node> become the root dirs
	prefix      string // node names are <prefix>-<index>
	nodes       int
	maxPods     int
	nodeIP      string
	cpuProfile  string // written from start to stop when set
	heapProfile string // written at stop when set
}

func parseAgentsFlags(args []string) (agentsOptions, error) {
	var o agentsOptions
	fs := flag.NewFlagSet("clusterbench agents", flag.ContinueOnError)
	fs.StringVar(&o.work, "work", "", "work directory (creds/<node>.kubeconfig are read, nodes/<node> are the root dirs)")
	fs.StringVar(&o.prefix, "prefix", "nk", "node name prefix")
	fs.IntVar(&o.nodes, "nodes", 1, "number of agents")
	fs.IntVar(&o.maxPods, "max-pods", 110, "each node's pod capacity")
	fs.StringVar(&o.nodeIP, "node-ip", "127.0.0.1", "each node's InternalIP")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run here")
	fs.StringVar(&o.heapProfile, "heapprofile", "", "write a heap profile here at stop")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.work == "" {
		return o, errors.New("--work is required")
	}
	if o.nodes < 1 {
		return o, errors.New("--nodes must be at least 1")
	}
	return o, nil
}

// nodeName is the name of node i of a mode's nodes.
func nodeName(prefix string, i int) string { return fmt.Sprintf("%s-%03d", prefix, i) }

// agentConfig is one simulated node's configuration: nodekit's defaults
// with the simulated runtime, the node's own kubeconfig, no node HTTP
// server (no read-only port, no secure port: nothing here would call
// them) and no local pod checkpoint (the kubelet has none). Node status,
// lease, PLEG and sync periods stay at their defaults.
func agentConfig(o agentsOptions, node string) nodekit.Config {
	cfg := nodekit.DefaultConfig()
	cfg.NodeName = node
	cfg.Runtime = nodekit.RuntimeSim
	cfg.RootDir = filepath.Join(o.work, "nodes", node)
	cfg.Kubeconfig = filepath.Join(o.work, "creds", node+".kubeconfig")
	cfg.Server.Port, cfg.Server.SecurePort = 0, 0
	cfg.DisablePodCheckpoint = true
	cfg.Agent.NodeIP = o.nodeIP
	cfg.Agent.MaxPods = o.maxPods
	cfg.NodeStatus.Labels = map[string]string{modeLabel: "nodekit"}
	return cfg
}

// runAgents starts every agent, runs until SIGTERM or SIGINT, then stops
// them all. An agent that fails to start fails the command.
func runAgents(args []string) error {
	o, err := parseAgentsFlags(args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopProfile := func() {}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		var once sync.Once
		stopProfile = func() { once.Do(pprof.StopCPUProfile) }
		defer stopProfile()
	}
	apps := make([]*fx.App, o.nodes)
	errs := make([]error, o.nodes)
	var wg sync.WaitGroup
	// Start a few at a time: each start builds clients and waits for its
	// informers to sync.
	sem := make(chan struct{}, 8)
	for i := range o.nodes {
		node := nodeName(o.prefix, i)
		log := errorsOnly(node)
		apps[i] = nodekit.New(agentConfig(o, node), log, nodekit.Defaults())
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			defer cancel()
			if err := apps[i].Start(sctx); err != nil {
				errs[i] = fmt.Errorf("start %s: %w", node, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		stopAll(apps)
		return err
	}
	fmt.Fprintf(os.Stderr, "[agents] %d agents started\n", o.nodes)
	<-ctx.Done()
	// The profiles cover the run up to the stop signal and are written
	// before the agents stop: stopping 100 loaded agents can outlast the
	// benchmark's patience, which then kills the process.
	stopProfile()
	if o.heapProfile != "" {
		if err := writeHeap(o.heapProfile); err != nil {
			fmt.Fprintln(os.Stderr, "[agents] heap profile:", err)
		}
	}
	return stopAll(apps)
}

func writeHeap(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("heap").WriteTo(f, 0)
}

// stopAll stops the started apps, a few at a time.
func stopAll(apps []*fx.App) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	sem := make(chan struct{}, 16)
	for _, app := range apps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := app.Stop(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
