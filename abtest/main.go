package abtest

import (
	"context"
	"errors"
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

// Run runs w under each variant spec in turn, on the same runtime, and
// reports what each measured. The specs are parsed first, so a bad one
// fails before any agent runs. Without w.RootDir, the agents' directories
// are in a temporary directory Run removes.
func (h *Harness) Run(ctx context.Context, w Workload, specs []string) (Report, error) {
	variants, err := h.parseAll(specs)
	if err != nil {
		return Report{}, err
	}
	if err := w.Validate(); err != nil {
		return Report{}, err
	}
	if w.RootDir == "" {
		dir, err := os.MkdirTemp("", "abtest-")
		if err != nil {
			return Report{}, err
		}
		defer os.RemoveAll(dir)
		w.RootDir = dir
	}
	rep := Report{Workload: w}
	for _, v := range variants {
		if h.Progress != nil {
			fmt.Fprintf(h.Progress, "%s: %s: starting %d pods on %s\n", h.Name, v.Name, w.Pods, w.Runtime)
		}
		r, err := runVariant(ctx, w, v, h.Log)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", v.Name, err)
		}
		rep.Results = append(rep.Results, r)
	}
	return rep, nil
}

// Main is the command line of cmd/plegab over h, args without the program
// name: it parses the flags, runs the variants (--a and --b, or --plegs)
// and prints the report on Stdout. It returns the exit code: 0, 1 when a
// run failed, 2 for bad flags or variants. SIGINT and SIGTERM stop the run.
func (h *Harness) Main(args []string) int {
	w := DefaultWorkload()
	fs := flag.NewFlagSet(h.Name, flag.ContinueOnError)
	fs.SetOutput(h.Stderr)
	fs.StringVar(&w.Runtime, "runtime", w.Runtime, "runtime: sim (the simulated in-process runtime) or cri (the CRI runtime at --runtime-endpoint)")
	fs.StringVar(&w.Endpoint, "runtime-endpoint", "", "CRI endpoint for --runtime cri")
	fs.StringVar(&w.Image, "image", w.Image, "container image (with sh and sleep for --runtime cri)")
	fs.StringVar(&w.CgroupParent, "cgroup-parent", "", "cgroup parent of the pods (--runtime cri)")
	fs.IntVar(&w.Pods, "pods", w.Pods, "number of pods")
	fs.DurationVar(&w.Duration, "duration", w.Duration, "measurement window, after every pod runs")
	fs.DurationVar(&w.ExitAfter, "exit-after", w.ExitAfter, "how long a container runs before it exits")
	fs.DurationVar(&w.ExitSpread, "exit-spread", w.ExitSpread, "extra run time spread evenly over the pods")
	fs.DurationVar(&w.BackOff, "backoff", w.BackOff, "initial CrashLoopBackOff delay")
	fs.DurationVar(&w.StartTimeout, "start-timeout", w.StartTimeout, "how long every pod may take to run")
	fs.DurationVar(&w.GCPeriod, "gc-period", 0, "the agents' container garbage collection period (default: the agent's, 1m)")
	fs.StringVar(&w.RootDir, "root-dir", "", "root directory of the agents (default: a temporary directory)")
	plegs := fs.String("plegs", "", "shorthand: comma-separated PLEGs to compare, each as the variant pleg=NAME")
	a := fs.String("a", "pleg=generic", "variant A: comma-separated key=value swaps, of: "+strings.Join(h.Keys(), ", "))
	b := fs.String("b", "pleg=evented", "variant B")
	fs.DurationVar(&w.SandboxLatency, "sandbox-latency", 0, "simulated RunPodSandbox latency (makes starting a queue)")
	fs.IntVar(&w.HighEvery, "high-every", w.HighEvery, "every Nth pod has priority 1000 (0: none)")
	fs.IntVar(&w.DenyEvery, "deny-every", w.DenyEvery, "every Nth pod is labelled "+DenyLabel+", refused by admission=deny (0: none)")
	fs.IntVar(&w.MaxStarting, "max-starting", w.MaxStarting, "start=priority: most pods starting at once (0: no limit)")
	verbosity := fs.Int("v", 0, "log verbosity of the agents (logs go to stderr)")
	fs.Usage = func() {
		fmt.Fprintf(h.Stderr, "Usage of %s: runs one workload under variants --a and --b and compares them.\n", h.Name)
		fs.PrintDefaults()
		fmt.Fprintln(h.Stderr, "\nBuilt-in swaps:")
		for _, b := range Builtins() {
			fmt.Fprintf(h.Stderr, "  %s=%s\t%s\n", b.Key, b.Value, b.Doc)
		}
		fmt.Fprintf(h.Stderr, "Registered: %s\n", strings.Join(h.Keys(), ", "))
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(h.Stderr, "%s: unexpected arguments %q\n", h.Name, fs.Args())
		return 2
	}
	specs := []string{*a, *b}
	if *plegs != "" {
		specs = nil
		for _, k := range strings.Split(*plegs, ",") {
			specs = append(specs, "pleg="+strings.TrimSpace(k))
		}
	}
	if _, err := h.parseAll(specs); err != nil {
		fmt.Fprintf(h.Stderr, "%s: %v\n", h.Name, err)
		return 2
	}
	if err := w.Validate(); err != nil {
		fmt.Fprintf(h.Stderr, "%s: %v\n", h.Name, err)
		return 2
	}
	log := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(*verbosity), textlogger.Output(h.Stderr)))
	if *verbosity == 0 {
		log = log.V(1) // errors only
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	run := *h
	run.Log, run.Progress = log, h.Stderr
	rep, err := run.Run(ctx, w, specs)
	if err != nil {
		fmt.Fprintf(h.Stderr, "%s: %v\n", h.Name, err)
		return 1
	}
	fmt.Fprint(h.Stdout, rep)
	return 0
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
