package podworkers

import (
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

func TestModuleProvidesWorkersAndQueue(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	var (
		workers Workers
		queue   *WorkQueue
	)
	app := fxtest.New(t,
		Module,
		fx.Provide(
			func() SyncHandler { return newFakeHandler() },
			func() StatusCache { return &fakeCache{} },
			func() clock.Clock { return clk },
			func() clock.WithTicker { return clk },
			func() logr.Logger { return logr.Discard() },
			func() prometheus.Registerer { return prometheus.NewRegistry() },
			func() Config { return Config{} },
		),
		fx.Populate(&workers, &queue),
	)
	app.RequireStart().RequireStop()
	pw, ok := workers.(*PodWorkers)
	if !ok {
		t.Fatalf("Workers is %T, want *PodWorkers", workers)
	}
	if pw.queue != queue {
		t.Errorf("the workers fill a different WorkQueue than the one provided")
	}
}
