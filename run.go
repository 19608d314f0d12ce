package nodekit

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"k8s.io/klog/v2"

	"github.com/nodekit/nodekit/runnable"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

type runParams struct {
	fx.In

	Lifecycle  fx.Lifecycle
	Shutdowner fx.Shutdowner
	Runtime    noderuntime.Runtime
	Log        logr.Logger
	Runnables  []runnable.Runnable `group:"runnables"`
}

// runOnStart is the one lifecycle hook: on start it asks the runtime for its
// version (failing start-up if it does not answer) and runs every member of
// the runnables group on its own goroutine (a member that fails stops the
// application); on stop it cancels them and waits. Containers keep running.
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
			for _, r := range p.Runnables {
				if r.Run == nil {
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := r.Run(runCtx); err != nil && runCtx.Err() == nil {
						p.Log.Error(err, "Subsystem failed; stopping", "subsystem", r.Name)
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
