package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the command line.
type options struct {
	kubelet, nodekit string
	endpoint, image  string
	cgroupRoot, work string
	pods             []int
	steady, timeout  time.Duration
	rounds           int
	// nodekitEnv is added to nodekit's environment (e.g. GOGC=50), to
	// measure a runtime setting.
	nodekitEnv []string
	// nodekitFlags are added to nodekit's command line (e.g.
	// --max-parallel-starts=8), to measure a setting.
	nodekitFlags []string
	// only, when set, is the one agent to run ("kubelet" or "nodekit"):
	// the other's rows and the ratios are left out.
	only string
	// first is the agent that runs first with each pod count and round
	// ("kubelet", the default, or "nodekit"), to see what the order does.
	first string
	// scrapeEvery is the period of the metrics-server-like GET of each
	// agent's /metrics/resource during the steady window (0: none).
	scrapeEvery time.Duration
	// dropBinaryCache drops each agent's binary from the page cache
	// before it starts (see dropPageCache).
	dropBinaryCache bool
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "peerbench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "peerbench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("peerbench", flag.ContinueOnError)
	fs.StringVar(&o.kubelet, "kubelet", "", "the upstream kubelet binary")
	fs.StringVar(&o.nodekit, "nodekit", "", "the nodekit binary")
	fs.StringVar(&o.endpoint, "endpoint", "", "CRI endpoint of the private containerd (unix://...)")
	fs.StringVar(&o.image, "image", "localhost/nodekit/busybox:1", "image of the pods' one container (present in the runtime)")
	fs.StringVar(&o.cgroupRoot, "cgroup-root", "", "cgroupfs parent of the pods' cgroups, e.g. /nodekit-peerbench")
	fs.StringVar(&o.work, "work", "", "work directory (root dirs, manifests, logs)")
	pods := fs.String("pods", "10,30,100,110", "comma-separated pod counts")
	fs.DurationVar(&o.steady, "steady", 30*time.Second, "steady window measured after every pod runs")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "longest wait for all pods to run, or to stop")
	fs.IntVar(&o.rounds, "rounds", 1, "runs of each agent per pod count (alternating); the report shows the median")
	fs.StringVar(&o.only, "only", "", "run only this agent (kubelet or nodekit); the table then has no ratios")
	fs.StringVar(&o.first, "first", "kubelet", "the agent that runs first with each pod count and round (kubelet or nodekit)")
	fs.DurationVar(&o.scrapeEvery, "scrape-every", 15*time.Second, "GET each agent's /metrics/resource this often during the steady window, "+
		"as metrics-server does (its default 15s); 0: no scrape")
	fs.BoolVar(&o.dropBinaryCache, "drop-binary-cache", false, "drop each agent's binary from the page cache before it starts "+
		"(with the binaries on a block device without readahead, file-backed RSS is then the pages the agent touched)")
	env := fs.String("nodekit-env", "", "comma-separated KEY=VALUE added to nodekit's environment, e.g. GOGC=50,GOMEMLIMIT=40MiB")
	flags := fs.String("nodekit-flags", "", "comma-separated flags added to nodekit's command line, e.g. --max-parallel-starts=8")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, s := range strings.Split(*pods, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return o, fmt.Errorf("--pods: %q is not a positive count", s)
		}
		o.pods = append(o.pods, n)
	}
	var err error
	if o.nodekitEnv, err = commaList("--nodekit-env", *env, "KEY=VALUE", func(kv string) bool { return strings.Contains(kv, "=") }); err != nil {
		return o, err
	}
	if o.nodekitFlags, err = commaList("--nodekit-flags", *flags, "a --flag", func(f string) bool { return strings.HasPrefix(f, "--") }); err != nil {
		return o, err
	}
	for name, v := range map[string]string{"--kubelet": o.kubelet, "--nodekit": o.nodekit, "--endpoint": o.endpoint,
		"--cgroup-root": o.cgroupRoot, "--work": o.work} {
		if v == "" {
			return o, fmt.Errorf("%s is required", name)
		}
	}
	if o.only != "" && o.only != "kubelet" && o.only != "nodekit" {
		return o, fmt.Errorf("--only: %q is neither kubelet nor nodekit", o.only)
	}
	if o.first != "kubelet" && o.first != "nodekit" {
		return o, fmt.Errorf("--first: %q is neither kubelet nor nodekit", o.first)
	}
	if o.scrapeEvery < 0 {
		return o, fmt.Errorf("--scrape-every must not be negative")
	}
	if o.rounds < 1 {
		return o, fmt.Errorf("--rounds must be at least 1")
	}
	return o, nil
}

// run measures every pod count with both agents and prints the table.
func run(ctx context.Context, o options) error {
	rt, err := connect(ctx, o.endpoint)
	if err != nil {
		return err
	}
	agents := []agent{kubeletAgent(o), nodekitAgent(o)}
	order := []int{0, 1}
	if o.first == "nodekit" {
		order = []int{1, 0}
	}
	var rows []row
	for _, n := range o.pods {
		r := row{pods: n}
		for round := range o.rounds {
			for _, i := range order {
				a := agents[i]
				if o.only != "" && a.name != o.only {
					continue
				}
				logf("%s, %d pods, round %d of %d: starting", a.name, n, round+1, o.rounds)
				m, err := measure(ctx, rt, a, n, o)
				if err != nil {
					return fmt.Errorf("%s with %d pods: %w", a.name, n, err)
				}
				logf("%s, %d pods: %s", a.name, n, m)
				r.runs[i] = append(r.runs[i], m)
			}
		}
		rows = append(rows, r)
	}
	printTable(os.Stdout, o, rows)
	// A failed scrape is in the table; the run fails too, so that it is
	// never taken for a clean one.
	failed := 0
	for _, r := range rows {
		for _, runs := range r.runs {
			for _, m := range runs {
				failed += m.scrape.failed
			}
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d scrapes of /metrics/resource failed (see the table)", failed)
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[peerbench] %s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// commaList splits the comma-separated value of flag name, dropping empty
// items; an item that is not ok is an error saying it is not a want.
func commaList(name, value, want string, ok func(string) bool) ([]string, error) {
	var out []string
	for _, item := range strings.Split(value, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		if !ok(item) {
			return nil, fmt.Errorf("%s: %q is not %s", name, item, want)
		}
		out = append(out, item)
	}
	return out, nil
}
