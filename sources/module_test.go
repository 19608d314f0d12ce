package sources

import (
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestModuleBuildsMuxFromSourceGroup(t *testing.T) {
	var m *Mux
	app := fxtest.New(t,
		fx.NopLogger,
		fx.Supply(fx.Annotate(clocktesting.NewFakeClock(epoch), fx.As(new(clock.Clock)))),
		fx.Supply(logr.Discard()),
		fx.Provide(fx.Annotate(func() *fakeSource { return newFakeSource("file") },
			fx.As(new(Source)), fx.ResultTags(`group:"sources"`))),
		fx.Provide(fx.Annotate(func() *fakeSource { return newFakeSource("api") },
			fx.As(new(Source)), fx.ResultTags(`group:"sources"`))),
		Module,
		fx.Populate(&m),
	)
	app.RequireStart().RequireStop()
	got := map[string]bool{}
	for _, name := range m.Sources() {
		got[name] = true
	}
	if len(got) != 2 || !got["file"] || !got["api"] {
		t.Fatalf("Sources() = %v, want file and api", m.Sources())
	}
}
