package shutdown

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func moduleDeps(t *testing.T) fx.Option {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	return fx.Provide(
		func() PodLister { return fakePods(nil) },
		func() PodKiller { return &fakeKiller{clk: clk} },
		func() noderuntime.EventRecorder { return &fakeEvents{} },
		func() clock.WithTicker { return clk },
		func() logr.Logger { return logr.Discard() },
		func() Config { return Config{GracePeriod: time.Second} },
	)
}

func TestModuleProvidesTheManagerWithTheLogindTrigger(t *testing.T) {
	t.Parallel()
	var (
		m  Manager
		tr Trigger
	)
	app := fxtest.New(t, fx.NopLogger, moduleDeps(t), Module, fx.Populate(&m, &tr))
	app.RequireStart().RequireStop()
	d, ok := m.(*Default)
	if !ok {
		t.Fatalf("Manager is %T, want *Default", m)
	}
	if _, ok := tr.(*Logind); !ok || d.trigger != tr {
		t.Errorf("Trigger is %T (manager's %T), want the manager's *Logind", tr, d.trigger)
	}
}

func TestADecoratedTriggerReplacesLogind(t *testing.T) {
	t.Parallel()
	mine := newFakeTrigger()
	var m Manager
	app := fxtest.New(t, fx.NopLogger, moduleDeps(t), Module,
		fx.Decorate(func(Trigger) Trigger { return mine }), fx.Populate(&m))
	app.RequireStart().RequireStop()
	if got := m.(*Default).trigger; got != Trigger(mine) {
		t.Errorf("the manager watches %T, want the decorated trigger", got)
	}
}

func TestModuleRefusesAnInvalidConfig(t *testing.T) {
	t.Parallel()
	var m Manager
	app := fx.New(fx.NopLogger, moduleDeps(t), Module,
		fx.Decorate(func(Config) Config { return Config{GracePeriod: time.Second, GracePeriodCriticalPods: 2 * time.Second} }),
		fx.Populate(&m))
	if err := app.Err(); err == nil {
		t.Error("an invalid config built a manager")
	}
}
