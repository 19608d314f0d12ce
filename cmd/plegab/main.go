package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2/textlogger"

	"github.com/nodekit/nodekit"
)

func main() {
	w := defaultWorkload()
	var plegs string
	flag.StringVar(&w.Runtime, "runtime", w.Runtime, "runtime: sim (the simulated in-process runtime) or cri (the CRI runtime at --runtime-endpoint)")
	flag.StringVar(&w.Endpoint, "runtime-endpoint", "", "CRI endpoint for --runtime cri")
	flag.StringVar(&w.Image, "image", w.Image, "container image (with sh and sleep for --runtime cri)")
	flag.StringVar(&w.CgroupParent, "cgroup-parent", "", "cgroup parent of the pods (--runtime cri)")
	flag.IntVar(&w.Pods, "pods", w.Pods, "number of pods")
	flag.DurationVar(&w.Duration, "duration", w.Duration, "measurement window, after every pod runs")
	flag.DurationVar(&w.ExitAfter, "exit-after", w.ExitAfter, "how long a container runs before it exits")
	flag.DurationVar(&w.ExitSpread, "exit-spread", w.ExitSpread, "extra run time spread evenly over the pods")
	flag.DurationVar(&w.BackOff, "backoff", w.BackOff, "initial CrashLoopBackOff delay")
	flag.DurationVar(&w.StartTimeout, "start-timeout", w.StartTimeout, "how long every pod may take to run")
	flag.DurationVar(&w.GCPeriod, "gc-period", 0, "the agents' container garbage collection period (default: the agent's, 1m)")
	flag.StringVar(&w.RootDir, "root-dir", "", "root directory of the agents (default: a temporary directory)")
	flag.StringVar(&plegs, "plegs", "", "shorthand: comma-separated PLEGs to compare, each as the variant pleg=NAME")
	var a, b string
	flag.StringVar(&a, "a", "pleg=generic", "variant A: comma-separated pleg=, start=, admission= swaps")
	flag.StringVar(&b, "b", "pleg=evented", "variant B")
	flag.DurationVar(&w.SandboxLatency, "sandbox-latency", 0, "simulated RunPodSandbox latency (makes starting a queue)")
	flag.IntVar(&w.HighEvery, "high-every", w.HighEvery, "every Nth pod has priority 1000 (0: none)")
	flag.IntVar(&w.DenyEvery, "deny-every", w.DenyEvery, "every Nth pod is labelled ab-deny, refused by admission=deny (0: none)")
	flag.IntVar(&w.MaxStarting, "max-starting", w.MaxStarting, "start=priority: most pods starting at once (0: no limit)")
	verbosity := flag.Int("v", 0, "log verbosity of the agents (logs go to stderr)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	specs := []string{a, b}
	if plegs != "" {
		specs = nil
		for _, k := range strings.Split(plegs, ",") {
			specs = append(specs, "pleg="+strings.TrimSpace(k))
		}
	}
	if err := run(ctx, w, specs, *verbosity); err != nil {
		fmt.Fprintln(os.Stderr, "plegab:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w Workload, specs []string, verbosity int) error {
	var variants []Variant
	for _, spec := range specs {
		v, err := ParseVariant(spec)
		if err != nil {
			return err
		}
		variants = append(variants, v)
	}
	if err := w.Validate(); err != nil {
		return err
	}
	if w.RootDir == "" {
		dir, err := os.MkdirTemp("", "plegab-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		w.RootDir = dir
	}
	log := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(verbosity)))
	if verbosity == 0 {
		log = log.V(1) // errors only
	}
	var results []Result
	for _, v := range variants {
		fmt.Fprintf(os.Stderr, "plegab: %s: starting %d pods on %s\n", v.Name, w.Pods, w.Runtime)
		r, err := Run(ctx, w, v, log)
		if err != nil {
			return fmt.Errorf("%s: %w", v.Name, err)
		}
		results = append(results, r)
	}
	fmt.Print(Table(w, results))
	return nil
}

// runtimeName is the Config.Runtime value of the workload's runtime.
func runtimeName(w Workload) string {
	if w.Runtime == nodekit.RuntimeSim {
		return nodekit.RuntimeSim
	}
	return nodekit.RuntimeCRI
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}
