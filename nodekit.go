package nodekit

import (
	"fmt"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	criapi "k8s.io/cri-api/pkg/apis"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/managers/certificate"
	"github.com/nodekit/nodekit/managers/eviction"
	"github.com/nodekit/nodekit/managers/images"
	"github.com/nodekit/nodekit/managers/logs"
	"github.com/nodekit/nodekit/managers/nodestatus"
	"github.com/nodekit/nodekit/managers/objects"
	"github.com/nodekit/nodekit/managers/prober"
	"github.com/nodekit/nodekit/managers/shutdown"
	"github.com/nodekit/nodekit/managers/stats"
	"github.com/nodekit/nodekit/managers/status"
	"github.com/nodekit/nodekit/managers/volumes"
	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/cri"
	"github.com/nodekit/nodekit/server"
	"github.com/nodekit/nodekit/sources"
	"github.com/nodekit/nodekit/sources/file"
	httpsource "github.com/nodekit/nodekit/sources/http"
)

// Defaults is the bundle of default subsystems: the agent, the generic PLEG,
// the pod workers, the CRI runtime manager, the source mux, the status
// manager, the node status reporter, the HTTP server, the prober, the
// API object caches, the volume manager, the stats provider, the container
// log rotation, the image garbage collector, the eviction manager and the
// graceful node shutdown manager (with the logind trigger). Pass
// it to New, then swap a piece with fx.Decorate or fx.Replace.
func Defaults() fx.Option {
	return fx.Options(
		agent.Module,
		pleg.Module,
		podworkers.Module,
		cri.Module,
		sources.Module,
		status.Module,
		nodestatus.Module,
		server.Module,
		prober.Module,
		objects.Module,
		volumes.Module,
		stats.Module,
		logs.Module,
		images.Module,
		eviction.Module,
		shutdown.Module,
	)
}

// New builds the agent's fx application from cfg and opts (usually
// Defaults() plus the embedder's swaps). It provides what is shared: the
// logger, the clock, the metrics registry, each subsystem's config, the CRI
// connections, the Kubernetes client when a kubeconfig is set, and the pod
// sources; it runs the subsystems when the app starts and stops them,
// leaving containers running, when it stops.
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
		fx.Invoke(runOnStart, serveStats),
	}
	return fx.New(append(all, opts...)...)
}

func shared(cfg Config, log logr.Logger) fx.Option {
	return fx.Options(
		fx.Supply(cfg, cfg.Agent, cfg.PLEG, cfg.PodWorkers, cfg.CRI, cfg.Server, cfg.Sim, cfg.Prober, cfg.Volumes, cfg.Objects, cfg.Logs, cfg.ImageGC, cfg.Eviction, cfg.Shutdown,
			cfg.statusConfig(), cfg.nodeStatusConfig(), cfg.statsConfig()),
		fx.Supply(log),
		fx.Provide(
			func() clock.WithTicker { return clock.RealClock{} },
			func(c clock.WithTicker) clock.Clock { return c },
			prometheus.NewRegistry,
			func(r *prometheus.Registry) prometheus.Gatherer { return r },
			func(r *prometheus.Registry) prometheus.Registerer { return r },
			connectCRI,
			func(s criServices) criapi.RuntimeService { return s.rs },
			func(s criServices) criapi.ImageManagerService { return s.is },
			kubeCredentials,
			func(c apiCredentials) *certificate.Manager { return c.certs },
			kubeClient,
		),
		wiring(),
		confinement(),
		probeWiring(),
		volumeWiring(),
		objectWiring(),
		offlineContentsWiring(),
		evictionWiring(),
		shutdownWiring(),
		nodeIPWiring(),
		runnableWiring(),
	)
}

// wiring binds the defaults' concrete types to the small interfaces their
// users own.
func wiring() fx.Option {
	return fx.Options(
		fx.Provide(
			func(c *pleg.Cache) podworkers.StatusCache { return c },
			func(q *podworkers.WorkQueue) agent.WorkSource { return q },
			func(q *podworkers.WorkQueue) agent.Requeuer { return q },
			func(m *sources.Mux) agent.PodConfig { return m },
			func(m status.Manager) agent.StatusStore { return m },
			mirrorClient,
			func(r *agent.Registry) status.PodResolver { return r },
			func() *deletionSafety { return &deletionSafety{} },
			func(d *deletionSafety) status.DeletionSafety { return d },
			func(a *agent.Agent) server.PodLister { return a },
			func(c Config) *server.Configz { return &server.Configz{Config: c} },
			func(a *agent.Agent) nodestatus.HealthSource { return agentHealth{a} },
			func(rt noderuntime.Runtime) nodestatus.RuntimeInfo { return rt },
			fx.Annotate(healthChecks, fx.ResultTags(`group:"healthchecks,flatten"`)),
			fx.Annotate(manifestSources, fx.ResultTags(`group:"sources,flatten"`)),
			apiSource,
			fx.Annotate(clusterSources, fx.ResultTags(`group:"sources,flatten"`)),
		),
		fx.Invoke(connectDeletionSafety),
	)
}

func healthChecks(a *agent.Agent) []server.HealthCheck {
	var out []server.HealthCheck
	for _, c := range a.HealthChecks() {
		out = append(out, c)
	}
	return out
}

// manifestSources returns the static-pod sources configured: the manifest
// directory and the manifest URL.
func manifestSources(cfg Config, clk clock.WithTicker, log logr.Logger) []sources.Source {
	var out []sources.Source
	if cfg.Manifests != "" {
		out = append(out, file.New(clk, log, file.Config{
			Path: cfg.Manifests, NodeName: cfg.NodeName, CheckPeriod: cfg.FileCheckPeriod,
		}))
	}
	if cfg.HTTPSource.URL != "" {
		out = append(out, httpsource.New(clk, log, cfg.HTTPSource))
	}
	return out
}
