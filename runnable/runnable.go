package runnable

import (
	"context"

	"go.uber.org/fx"
)

// Group is the name of the fx value group of Runnables.
const Group = "runnables"

// Runnable is one piece of work of the application.
type Runnable struct {
	// Name names it in logs and errors ("pleg", "image gc").
	Name string
	// Run blocks until ctx ends and returns nil then, or the error that
	// stopped it early (which stops the application). nil: nothing to run.
	Run func(ctx context.Context) error
}

// As annotates constructor, a function returning a Runnable (and
// optionally an error), so that fx.Provide adds its result to Group.
func As(constructor any) any {
	return fx.Annotate(constructor, fx.ResultTags(`group:"`+Group+`"`))
}

// Params collects the group, for the runner of an application.
type Params struct {
	fx.In

	// Runnables are the group's members, in no particular order.
	Runnables []Runnable `group:"runnables"`
}
