package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// options are the command line of the benchmark.
type options struct {
	nodes, podsPerNode int
	modes              []string
	kubeconfig         string // the admin's (the lab's admin.kubeconfig)
	server             string // the API server's URL, for the nodes' kubeconfigs
	caCert, caKey      string // the cluster CA, which signs the nodes' client certificates
	kwok               string // the kwok binary (hack/build-kwok.sh)
	work               string
	timeout            time.Duration
	// teardown deletes the pods through their nodes and measures it; off,
	// the run ends when every pod is Running (the pods are then removed
	// with grace period 0 after the nodes' process has stopped).
	teardown bool
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "agents" {
		if err := runAgents(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "clusterbench agents:", err)
			os.Exit(1)
		}
		return
	}
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "clusterbench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "clusterbench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("clusterbench", flag.ContinueOnError)
	fs.IntVar(&o.nodes, "nodes", 10, "simulated nodes")
	fs.IntVar(&o.podsPerNode, "pods-per-node", 10, "pods bound to each node")
	mode := fs.String("mode", "both", "nodekit, kwok or both (nodekit first)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("NODEKIT_KUBECONFIG"), "the admin kubeconfig (default $NODEKIT_KUBECONFIG)")
	fs.StringVar(&o.caCert, "ca-cert", os.Getenv("NODEKIT_KUBE_CA_FILE"), "the cluster CA certificate (default $NODEKIT_KUBE_CA_FILE)")
	fs.StringVar(&o.caKey, "ca-key", "", "the cluster CA's key (default ca.key beside --ca-cert)")
	fs.StringVar(&o.kwok, "kwok", "", "the kwok binary (hack/build-kwok.sh); needed by --mode kwok and both")
	fs.StringVar(&o.work, "work", "", "work directory (node root dirs, credentials, logs, profiles)")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Minute, "longest wait of each phase")
	fs.BoolVar(&o.teardown, "teardown", true, "delete the pods through the nodes and time it; false ends each mode's run (CPU, RSS, API requests) once every pod is Running")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch *mode {
	case "both":
		o.modes = []string{"nodekit", "kwok"}
	case "nodekit", "kwok":
		o.modes = []string{*mode}
	default:
		return o, fmt.Errorf("--mode %q: want nodekit, kwok or both", *mode)
	}
	if o.nodes < 1 || o.podsPerNode < 0 {
		return o, errors.New("--nodes must be at least 1 and --pods-per-node at least 0")
	}
	if o.caKey == "" && o.caCert != "" {
		o.caKey = filepath.Join(filepath.Dir(o.caCert), "ca.key")
	}
	for name, v := range map[string]string{"--kubeconfig": o.kubeconfig, "--ca-cert": o.caCert, "--work": o.work} {
		if v == "" {
			return o, fmt.Errorf("%s is required", name)
		}
	}
	if o.kwok == "" && o.modes[len(o.modes)-1] == "kwok" {
		return o, errors.New("--kwok is required with --mode kwok or both")
	}
	return o, nil
}

// run measures each mode in turn and prints the table.
func run(ctx context.Context, o options) error {
	c, err := newCluster(o.kubeconfig)
	if err != nil {
		return err
	}
	rc, err := restConfigHost(o.kubeconfig)
	if err != nil {
		return err
	}
	o.server = rc
	var results []result
	for _, name := range o.modes {
		m := nodekitMode(o)
		if name == "kwok" {
			m = kwokMode(o)
		}
		logf("%s: %d nodes x %d pods: starting (load average %s)", m.name, o.nodes, o.podsPerNode, loadAverage())
		r, err := measure(ctx, c, m, o)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		logf("%s: %s", m.name, r)
		results = append(results, r)
	}
	printTable(os.Stdout, o.nodes, o.podsPerNode, results)
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[clusterbench] %s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// loadAverage returns /proc/loadavg's first three fields.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	var a, b5, c float64
	if _, err := fmt.Sscan(string(b), &a, &b5, &c); err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%.2f %.2f %.2f", a, b5, c)
}
