package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/textlogger"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/agent"
)

// hello is the static pod run without --manifests.
const hello = `apiVersion: v1
kind: Pod
metadata:
  name: hello
spec:
  containers:
  - name: app
    image: busybox:1
`

// Config returns the agent's configuration for an ordinary user: the
// simulated runtime, everything under root, no server port.
func Config(root, manifests, nodeName string) nodekit.Config {
	cfg := nodekit.DefaultConfig()
	cfg.Runtime, cfg.NodeName = nodekit.RuntimeSim, nodeName
	cfg.RootDir, cfg.Manifests = filepath.Join(root, "node"), manifests
	cfg.Server.Port, cfg.Server.SecurePort = 0, 0
	return cfg
}

// watch prints a line to out as each pod becomes Running, and returns nil
// once every pod runs if untilRunning, or when ctx ends.
func watch(ctx context.Context, out io.Writer, reg *agent.Registry, statuses agent.StatusStore, untilRunning bool) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	told := map[string]bool{}
	for {
		pods := reg.List()
		sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
		running := 0
		for _, p := range pods {
			if s, ok := statuses.GetPodStatus(p.UID); ok && s.Phase == corev1.PodRunning {
				running++
				if !told[p.Name] {
					told[p.Name] = true
					fmt.Fprintf(out, "pod %s/%s Running\n", p.Namespace, p.Name)
				}
			}
		}
		if untilRunning && len(pods) > 0 && running == len(pods) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func run(ctx context.Context, log logr.Logger, root, manifests string, untilRunning bool) error {
	if manifests == "" {
		manifests = filepath.Join(root, "manifests")
		if err := os.MkdirAll(manifests, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(manifests, "hello.yaml"), []byte(hello), 0o644); err != nil {
			return err
		}
	}
	host, _ := os.Hostname()
	var (
		reg      *agent.Registry
		statuses agent.StatusStore
	)
	app := nodekit.New(Config(root, manifests, host), log, nodekit.Defaults(), fx.Populate(&reg, &statuses))
	if err := app.Start(ctx); err != nil {
		return err
	}
	fmt.Printf("agent running as uid %d in %s\n", os.Geteuid(), root)
	err := watch(ctx, os.Stdout, reg, statuses, untilRunning)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return errors.Join(err, app.Stop(stopCtx))
}

func main() {
	root := flag.String("root-dir", "", "directory for every file of the agent; defaults to a new temporary directory, removed at exit")
	manifests := flag.String("manifests", "", "directory of static pod manifests; defaults to one hello pod")
	untilRunning := flag.Bool("until-running", false, "exit once every pod runs")
	flag.Parse()
	dir := *root
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "sim-noroot-"); err != nil {
			fmt.Fprintln(os.Stderr, "sim-noroot:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(dir)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, textlogger.NewLogger(textlogger.NewConfig()), dir, *manifests, *untilRunning); err != nil {
		fmt.Fprintln(os.Stderr, "sim-noroot:", err)
		stop()
		os.RemoveAll(dir)
		os.Exit(1)
	}
}
