package file

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/sources"
)

func TestModuleAddsSourceToGroup(t *testing.T) {
	var got struct {
		fx.In
		Sources []sources.Source `group:"sources"`
	}
	app := fxtest.New(t,
		fx.NopLogger,
		fx.Supply(fx.Annotate(clocktesting.NewFakeClock(time.Now()), fx.As(new(clock.WithTicker)))),
		fx.Supply(logr.Discard()),
		fx.Supply(Config{Path: t.TempDir(), NodeName: "n"}),
		Module,
		fx.Populate(&got),
	)
	app.RequireStart().RequireStop()
	if len(got.Sources) != 1 || got.Sources[0].Name() != sources.FileSource {
		t.Fatalf("group sources = %v, want one source named file", got.Sources)
	}
}

func TestModuleFeedsTheMux(t *testing.T) {
	var mux *sources.Mux
	fc := clocktesting.NewFakeClock(time.Now())
	app := fxtest.New(t,
		fx.NopLogger,
		fx.Supply(fx.Annotate(fc, fx.As(new(clock.WithTicker)))),
		fx.Supply(fx.Annotate(fc, fx.As(new(clock.Clock)))),
		fx.Supply(logr.Discard()),
		fx.Supply(Config{Path: t.TempDir(), NodeName: "n"}),
		Module,
		sources.Module,
		fx.Populate(&mux),
	)
	app.RequireStart().RequireStop()
	if names := mux.Sources(); len(names) != 1 || names[0] != sources.FileSource {
		t.Fatalf("Mux sources = %v, want [file]", names)
	}
}
