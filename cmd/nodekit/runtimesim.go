package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2/textlogger"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/runtime/sim"
)

// simOptions are the flags of `nodekit runtime-sim`.
type simOptions struct {
	socket    string
	latency   time.Duration
	verbosity int
	// listening, when set, is called once the socket listens (tests wait on
	// it, since a stale socket file would refuse a client before).
	listening func()
}

func newRuntimeSimCommand() *cobra.Command {
	o := &simOptions{}
	cmd := &cobra.Command{
		Use:   "runtime-sim --socket PATH",
		Short: "Serve a SIMULATED container runtime over CRI (nothing runs)",
		Long: "Serve the SIMULATED container runtime of runtime/sim as a CRI runtime and\n" +
			"image service on a unix socket, so that crictl or an agent in another\n" +
			"process (nodekit run --runtime-endpoint unix://PATH) can use it. Nothing\n" +
			"runs: containers are records scripted by their pods' sim.nodekit.io/\n" +
			"annotations. A stale socket file at PATH is removed first. SIGTERM or\n" +
			"SIGINT stops it; its state is lost.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(o.verbosity)))
			return runSim(ctx, o, log)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.socket, "socket", "", "unix socket to serve the CRI on, e.g. /run/nodekit-sim.sock (required)")
	fs.DurationVar(&o.latency, "latency", 0, "simulated duration of every CRI call")
	fs.IntVarP(&o.verbosity, "v", "v", 0, "log verbosity (4: every sandbox)")
	return cmd
}

// runSim serves a simulated runtime on o.socket until ctx ends.
func runSim(ctx context.Context, o *simOptions, log logr.Logger) error {
	if o.socket == "" {
		return errors.New("--socket is required")
	}
	cfg := sim.Config{DefaultLatency: sim.Latency{Fixed: o.latency}}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := removeStaleSocket(o.socket); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.socket), 0o755); err != nil {
		return fmt.Errorf("create directory of socket %s: %w", o.socket, err)
	}
	l, err := net.Listen("unix", o.socket)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.socket, err)
	}
	if o.listening != nil {
		o.listening()
	}
	log.Info("Serving a SIMULATED container runtime over CRI: no containers run",
		"endpoint", "unix://"+o.socket, "runtime", sim.RuntimeName, "version", sim.RuntimeVersion, "latency", o.latency)
	rt := sim.New(clock.RealClock{}, log, cfg)
	err = sim.Serve(ctx, l, rt, rt)
	log.Info("Stopped the simulated runtime")
	return err
}

// removeStaleSocket removes a socket file left by an earlier run; anything
// else at path is an error.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("socket %s: a file that is not a socket is in the way", path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}
