package apiserver

import (
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/sources"
)

func TestModuleFeedsTheMux(t *testing.T) {
	var mux *sources.Mux
	fc := clocktesting.NewFakeClock(epoch)
	app := fxtest.New(t,
		fx.NopLogger,
		fx.Supply(fx.Annotate(fc, fx.As(new(clock.Clock)))),
		fx.Supply(fx.Annotate(fake.NewClientset(), fx.As(new(kubernetes.Interface)))),
		fx.Supply(logr.Discard()),
		fx.Supply(Config{NodeName: node}),
		Module,
		sources.Module,
		fx.Populate(&mux),
	)
	app.RequireStart().RequireStop()
	if names := mux.Sources(); len(names) != 1 || names[0] != sources.APIServerSource {
		t.Fatalf("Mux sources = %v, want [api]", names)
	}
}
