package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"k8s.io/klog/v2/textlogger"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/pleg"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// SwapPLEG is the whole swap: the agent receives a SnapshotPLEG wherever it
// asks for a pleg.Interface.
func SwapPLEG(period time.Duration) fx.Option {
	return fx.Decorate(func(_ pleg.Interface, rt noderuntime.Runtime, cache *pleg.Cache, clk clock.WithTicker, log logr.Logger) pleg.Interface {
		return NewSnapshotPLEG(rt, cache, clk, log, period)
	})
}

func main() {
	cfg := nodekit.DefaultConfig()
	flag.StringVar(&cfg.Manifests, "manifests", "", "directory of static pod manifests")
	flag.StringVar(&cfg.RuntimeEndpoint, "runtime-endpoint", "", "CRI endpoint")
	flag.StringVar(&cfg.NodeName, "node-name", "", "node name (default: hostname)")
	flag.StringVar(&cfg.RootDir, "root-dir", cfg.RootDir, "root directory")
	flag.IntVar(&cfg.Server.Port, "port", cfg.Server.Port, "HTTP port, 0 for none")
	flag.Parse()
	log := textlogger.NewLogger(textlogger.NewConfig())
	app := nodekit.New(cfg, log, nodekit.Defaults(), SwapPLEG(500*time.Millisecond))
	if err := app.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "custom-pleg:", err)
		os.Exit(1)
	}
	<-app.Done()
	if err := app.Stop(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "custom-pleg:", err)
		os.Exit(1)
	}
}
