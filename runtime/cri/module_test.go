package cri

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	criapi "k8s.io/cri-api/pkg/apis"
	fakeapi "k8s.io/cri-api/pkg/apis/testing"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestModuleProvidesRuntimeAndGarbageCollector(t *testing.T) {
	var rt noderuntime.Runtime
	app := fxtest.New(t,
		fx.NopLogger,
		fx.Supply(
			fx.Annotate(fakeapi.NewFakeRuntimeService(), fx.As(new(criapi.RuntimeService))),
			fx.Annotate(fakeapi.NewFakeImageService(), fx.As(new(criapi.ImageManagerService))),
			fx.Annotate(clocktesting.NewFakeClock(time.Unix(0, 0)), fx.As(new(clock.WithTicker))),
			logr.Discard(),
			Config{InstanceID: "n"},
		),
		Module,
		fx.Populate(&rt),
	)
	app.RequireStart()
	defer app.RequireStop()
	if _, ok := rt.(noderuntime.GarbageCollector); !ok {
		t.Error("the module's runtime is not a GarbageCollector")
	}
	if _, err := rt.Version(context.Background()); err != nil || rt.Type() != fakeapi.FakeRuntimeName {
		t.Errorf("Version err %v, Type %q", err, rt.Type())
	}
}
