// Package runnable is the one way work joins a nodekit application: every
// subsystem with a Run(ctx) error method (the agent's sync loop, the PLEG,
// the pod workers, the pod config, the prober, the servers, the managers)
// adds a Runnable to the fx value group "runnables", and nodekit.New runs
// every member when the application starts and cancels them all, waiting
// for each to return, when it stops. The first member that fails stops the
// application.
//
// # Extending
//
// An embedder adds a goroutine the same way as a subsystem does:
//
//	fx.Provide(runnable.As(func(m MyManager) runnable.Runnable {
//		return runnable.Runnable{Name: "my manager", Run: m.Run}
//	}))
//
// Take the subsystem as the interface the application knows it by, so that
// a value an embedder replaced with fx.Decorate is the one that runs. A
// constructor returns a Runnable with a nil Run when, with this
// configuration, there is nothing to run.
//
// # Concurrency
//
// Each Run gets its own goroutine and a context that ends at stop; it must
// block until then and return nil on a clean stop.
package runnable
