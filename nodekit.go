package nodekit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	criapi "k8s.io/cri-api/pkg/apis"
	criclient "k8s.io/cri-client/pkg"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/cri"
	"github.com/nodekit/nodekit/server"
	"github.com/nodekit/nodekit/sources"
	"github.com/nodekit/nodekit/sources/file"
)

// Defaults is the bundle of default subsystems: the agent, the generic PLEG,
// the pod workers, the CRI runtime manager, the source mux and the HTTP
// server. Pass it to New, then swap a piece with fx.Decorate or fx.Replace.
func Defaults() fx.Option {
	return fx.Options(
		agent.Module,
		pleg.Module,
		podworkers.Module,
		cri.Module,
		sources.Module,
		server.Module,
	)
}

// New builds the agent's fx application from cfg and opts (usually
// Defaults() plus the embedder's swaps). It provides what is shared: the
// logger, the clock, each subsystem's config, the CRI connections and the
// manifest source; it runs the agent and the server when the app starts and
// stops them, leaving containers running, when it stops.
func New(cfg Config, log logr.Logger, opts ...fx.Option) *fx.App {
	cfg, err := cfg.Complete()
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return fx.New(fx.Error(fmt.Errorf("invalid configuration: %w", err)))
	}
	all := []fx.Option{
		fx.WithLogger(func() fxevent.Logger { return fxLogger{log.WithName("fx")} }),
		shared(cfg, log),
		fx.Invoke(runOnStart),
	}
	return fx.New(append(all, opts...)...)
}

func shared(cfg Config, log logr.Logger) fx.Option {
	return fx.Options(
		fx.Supply(cfg, cfg.Agent, cfg.PLEG, cfg.PodWorkers, cfg.CRI, cfg.Server),
		fx.Supply(log),
		fx.Provide(
			func() clock.WithTicker { return clock.RealClock{} },
			func(c clock.WithTicker) clock.Clock { return c },
			prometheus.NewRegistry,
			func(r *prometheus.Registry) prometheus.Gatherer { return r },
			func(r *prometheus.Registry) prometheus.Registerer { return r },
			connectRuntime,
			connectImages,
			func(c *pleg.Cache) podworkers.StatusCache { return c },
			func(q *podworkers.WorkQueue) agent.WorkSource { return q },
			func(q *podworkers.WorkQueue) agent.Requeuer { return q },
			func(m *sources.Mux) agent.PodConfig { return m },
			func(a *agent.Agent) server.PodLister { return a },
			fx.Annotate(healthChecks, fx.ResultTags(`group:"healthchecks,flatten"`)),
			fx.Annotate(manifestSources, fx.ResultTags(`group:"sources,flatten"`)),
		),
	)
}

func healthChecks(a *agent.Agent) []server.HealthCheck {
	var out []server.HealthCheck
	for _, c := range a.HealthChecks() {
		out = append(out, c)
	}
	return out
}

// manifestSources returns the static-pod manifest source when a directory
// is configured.
func manifestSources(cfg Config, clk clock.WithTicker, log logr.Logger) []sources.Source {
	if cfg.Manifests == "" {
		return nil
	}
	return []sources.Source{file.New(clk, log, file.Config{
		Path: cfg.Manifests, NodeName: cfg.NodeName, CheckPeriod: cfg.FileCheckPeriod,
	})}
}

// connectRuntime dials the CRI runtime service; an endpoint that does not
// answer fails start-up with an error naming it.
func connectRuntime(cfg Config, log logr.Logger) (criapi.RuntimeService, error) {
	ctx, cancel := context.WithTimeout(klog.NewContext(context.Background(), log.WithName("cri-client")), 30*time.Second)
	defer cancel()
	rs, err := criclient.NewRemoteRuntimeServiceBuilder().
		WithEndpoint(cfg.RuntimeEndpoint).
		WithConnectionTimeout(cfg.RuntimeRequestTimeout).
		WithTracerProvider(nil).
		Build(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to container runtime at %s: %w", cfg.RuntimeEndpoint, err)
	}
	return rs, nil
}

// connectImages dials the CRI image service.
func connectImages(cfg Config, log logr.Logger) (criapi.ImageManagerService, error) {
	ctx, cancel := context.WithTimeout(klog.NewContext(context.Background(), log.WithName("cri-client")), 30*time.Second)
	defer cancel()
	is, err := criclient.NewRemoteImageServiceBuilder().
		WithEndpoint(cfg.ImageEndpoint).
		WithConnectionTimeout(cfg.RuntimeRequestTimeout).
		WithTracerProvider(nil).
		Build(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to image service at %s: %w", cfg.ImageEndpoint, err)
	}
	return is, nil
}

type runParams struct {
	fx.In

	Lifecycle  fx.Lifecycle
	Shutdowner fx.Shutdowner
	Agent      *agent.Agent
	Server     *server.Server
	Runtime    noderuntime.Runtime
	Log        logr.Logger
}

// runOnStart is the one lifecycle hook: on start it asks the runtime for its
// version (failing start-up if it does not answer) and runs the agent and the
// server; on stop it cancels them and waits. Containers keep running.
func runOnStart(p runParams) {
	var (
		cancel context.CancelFunc
		wg     sync.WaitGroup
	)
	p.Lifecycle.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			v, err := p.Runtime.Version(ctx)
			if err != nil {
				return fmt.Errorf("container runtime version: %w", err)
			}
			p.Log.Info("Connected to container runtime", "runtime", v.RuntimeName, "version", v.RuntimeVersion)
			var runCtx context.Context
			runCtx, cancel = context.WithCancel(klog.NewContext(context.Background(), p.Log))
			for name, run := range map[string]func(context.Context) error{"agent": p.Agent.Run, "server": p.Server.Run} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := run(runCtx); err != nil {
						p.Log.Error(err, "Subsystem failed; stopping", "subsystem", name)
						_ = p.Shutdowner.Shutdown(fx.ExitCode(1))
					}
				}()
			}
			return nil
		},
		OnStop: func(ctx context.Context) error {
			if cancel != nil {
				cancel()
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
				return nil
			case <-ctx.Done():
				return fmt.Errorf("agent did not stop in time: %w", ctx.Err())
			}
		},
	})
}
