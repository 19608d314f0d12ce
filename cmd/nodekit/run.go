package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/dig"
	"go.uber.org/fx"
	"k8s.io/klog/v2/textlogger"

	"github.com/nodekit/nodekit"
)

func newRunCommand() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the node agent",
		Long: "Run the node agent: static pods from --manifests run on the CRI runtime at\n" +
			"--runtime-endpoint; their status is served on http://ADDRESS:PORT/pods.\n" +
			"SIGTERM or SIGINT stops the agent and leaves the containers running; the\n" +
			"next start adopts them.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.kflags.version {
				fmt.Fprintln(cmd.OutOrStdout(), versionString())
				return nil
			}
			warnings, err := o.loadConfigFile(cmd.Flags())
			if err != nil {
				return err
			}
			if err := o.complete(); err != nil {
				return err
			}
			return run(cmd.Context(), o, warnings)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func run(ctx context.Context, o *options, warnings []string) error {
	logCfg := textlogger.NewConfig(textlogger.Verbosity(o.verbosity))
	log := textlogger.NewLogger(logCfg)
	for _, w := range warnings {
		log.Info("Config file setting ignored or deprecated", "config", o.configFile, "warning", w)
	}
	cfg := o.config()
	if err := checkKernelDefaults("/proc/sys", o.server.hardening.protectKernelDefaults, log); err != nil {
		return err
	}
	cfg.CRI.CgroupDriver = runtimeCgroupDriver(ctx, cfg, log)
	app := nodekit.New(cfg, log, nodekit.Defaults(), fx.Supply(verbositySetter(logCfg)))
	if err := app.Err(); err != nil {
		return dig.RootCause(err)
	}
	startCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := app.Start(startCtx); err != nil {
		return fmt.Errorf("start agent: %w", dig.RootCause(err))
	}
	sig := <-app.Wait()
	log.Info("Stopping agent; containers keep running", "signal", sig.Signal)
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app.Stop(stopCtx); err != nil {
		return fmt.Errorf("stop agent: %w", err)
	}
	if sig.ExitCode != 0 {
		return fmt.Errorf("agent stopped with exit code %d", sig.ExitCode)
	}
	return nil
}
