package nodekit

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/managers/certificate"
	"github.com/nodekit/nodekit/managers/eviction"
	"github.com/nodekit/nodekit/managers/images"
	"github.com/nodekit/nodekit/managers/logs"
	"github.com/nodekit/nodekit/managers/nodestatus"
	"github.com/nodekit/nodekit/managers/objects"
	"github.com/nodekit/nodekit/managers/shutdown"
	"github.com/nodekit/nodekit/managers/status"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/server"
)

type runParams struct {
	fx.In

	Lifecycle  fx.Lifecycle
	Shutdowner fx.Shutdowner
	Agent      *agent.Agent
	Server     *server.Server
	Secure     *server.SecureServer
	Statuses   status.Manager
	NodeStatus nodestatus.Manager
	Client     kubernetes.Interface `optional:"true"`
	Runtime    noderuntime.Runtime
	Events     noderuntime.EventRecorder
	Logs       logs.Manager     `optional:"true"`
	Images     images.Manager   `optional:"true"`
	Eviction   eviction.Manager `optional:"true"`
	Shutdown   shutdown.Manager `optional:"true"`
	Config     Config
	Log        logr.Logger
	Objects    objects.Manager       `optional:"true"`
	Tokens     objects.TokenManager  `optional:"true"`
	Services   objects.ServiceLister `optional:"true"`
	Certs      *certificate.Manager  `optional:"true"`
}

// runOnStart is the one lifecycle hook: on start it asks the runtime for its
// version (failing start-up if it does not answer) and runs the agent, the
// server, the status manager, the container log rotation, image GC and
// eviction (not with the simulated runtime), the node shutdown manager,
// the event recorder (when it
// has a Run method: the default sends events to the API server), the object
// caches, token manager and service lister (each when present with a Run
// method) and, with an API server, the node status reporter and (with
// rotation on) the client certificate manager; on stop it
// cancels them and waits. Containers keep running.
func runOnStart(p runParams) {
	var (
		cancel context.CancelFunc
		wg     sync.WaitGroup
	)
	runnables := map[string]func(context.Context) error{
		"agent": p.Agent.Run, "server": p.Server.Run, "secure server": p.Secure.Run, "status manager": p.Statuses.Run,
	}
	if p.Client != nil {
		runnables["node status"] = p.NodeStatus.Run
	}
	if p.Certs != nil {
		runnables["client certificate"] = p.Certs.Run
	}
	if p.Logs != nil && p.Config.Runtime != RuntimeSim { // the sim writes no log files
		runnables["container logs"] = p.Logs.Run
	}
	if p.Images != nil && p.Config.Runtime != RuntimeSim { // the sim has no image filesystem
		runnables["image gc"] = p.Images.Run
	}
	if p.Eviction != nil && p.Config.Runtime != RuntimeSim { // the sim's stats are made up
		runnables["eviction"] = p.Eviction.Run
	}
	if p.Shutdown != nil {
		runnables["node shutdown"] = p.Shutdown.Run
	}
	type runner interface{ Run(context.Context) error }
	if r, ok := p.Events.(runner); ok {
		runnables["events"] = r.Run
	}
	for name, v := range map[string]any{"objects": p.Objects, "tokens": p.Tokens, "services": p.Services} {
		if r, ok := v.(runner); ok && !isNil(v) {
			runnables[name] = r.Run
		}
	}
	p.Lifecycle.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			v, err := p.Runtime.Version(ctx)
			if err != nil {
				return fmt.Errorf("container runtime version: %w", err)
			}
			p.Log.Info("Connected to container runtime", "runtime", v.RuntimeName, "version", v.RuntimeVersion)
			var runCtx context.Context
			runCtx, cancel = context.WithCancel(klog.NewContext(context.Background(), p.Log))
			for name, run := range runnables {
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

// isNil reports whether v is nil or an interface holding a nil pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
