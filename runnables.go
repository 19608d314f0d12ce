package nodekit

import (
	"context"

	"go.uber.org/fx"
	"k8s.io/client-go/kubernetes"

	"github.com/nodekit/nodekit/managers/certificate"
	"github.com/nodekit/nodekit/managers/eviction"
	"github.com/nodekit/nodekit/managers/images"
	"github.com/nodekit/nodekit/managers/logs"
	"github.com/nodekit/nodekit/managers/nodestatus"
	"github.com/nodekit/nodekit/managers/objects"
	"github.com/nodekit/nodekit/managers/shutdown"
	"github.com/nodekit/nodekit/managers/status"
	"github.com/nodekit/nodekit/runnable"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/server"
)

// runnableWiring adds to the runnables group the subsystems whose modules
// do not add themselves (the agent's module adds the sync loop, the PLEG,
// the pod workers, the pod config, the prober and the volume manager).
// Every one is optional: a module left out runs nothing.
func runnableWiring() fx.Option {
	return fx.Provide(fx.Annotate(subsystemRunnables, fx.ResultTags(`group:"`+runnable.Group+`,flatten"`)))
}

type subsystemParams struct {
	fx.In

	Config     Config
	Server     *server.Server            `optional:"true"`
	Secure     *server.SecureServer      `optional:"true"`
	Statuses   status.Manager            `optional:"true"`
	NodeStatus nodestatus.Manager        `optional:"true"`
	Client     kubernetes.Interface      `optional:"true"`
	Events     noderuntime.EventRecorder `optional:"true"`
	Logs       logs.Manager              `optional:"true"`
	Images     images.Manager            `optional:"true"`
	Eviction   eviction.Manager          `optional:"true"`
	Objects    objects.Manager           `optional:"true"`
	Tokens     objects.TokenManager      `optional:"true"`
	Services   objects.ServiceLister     `optional:"true"`
	Shutdown   shutdown.Manager          `optional:"true"`
	Certs      *certificate.Manager      `optional:"true"`
}

// subsystemRunnables are the servers, the status manager, with an API
// server the node status reporter and (with rotation or bootstrap on) the
// client certificate manager, the container log rotation, image GC
// and eviction (not with the simulated runtime), the node shutdown
// manager, and the event recorder,
// object caches, token manager and service lister when they have a Run
// method (the defaults do with an API server).
func subsystemRunnables(p subsystemParams) []runnable.Runnable {
	var out []runnable.Runnable
	add := func(name string, v any) {
		if r, ok := v.(interface{ Run(context.Context) error }); ok && !isNil(v) {
			out = append(out, runnable.Runnable{Name: name, Run: r.Run})
		}
	}
	add("server", p.Server)
	add("secure server", p.Secure)
	add("status manager", p.Statuses)
	if p.Client != nil {
		add("node status", p.NodeStatus)
	}
	add("client certificate", p.Certs)
	add("node shutdown", p.Shutdown)
	if p.Config.Runtime != RuntimeSim {
		add("container logs", p.Logs) // the sim writes no log files
		add("image gc", p.Images)     // the sim has no image filesystem
		add("eviction", p.Eviction)   // the sim's stats are made up
	}
	add("events", p.Events)
	add("objects", p.Objects)
	add("tokens", p.Tokens)
	add("services", p.Services)
	return out
}
