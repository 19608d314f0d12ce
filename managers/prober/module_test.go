package prober

import (
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

func TestModule(t *testing.T) {
	t.Parallel()
	clk := testingclock.NewFakeClock(epoch)
	var (
		m  Manager
		rp ResultsProvider
	)
	app := fxtest.New(t,
		Module,
		fx.Provide(
			func() ExecRunner { return &fakeExec{} },
			func() EventRecorder { return &fakeRecorder{} },
			func() clock.WithTicker { return clk },
			func() logr.Logger { return logr.Discard() },
			func() prometheus.Registerer { return prometheus.NewRegistry() },
		),
		fx.Supply(Config{}),
		fx.Populate(&m, &rp),
	)
	app.RequireStart()
	defer app.RequireStop()

	p, ok := m.(*Prober)
	if !ok {
		t.Fatalf("Module provides %T as Manager, want *Prober", m)
	}
	if rp != ResultsProvider(p) {
		t.Error("the ResultsProvider is not the Manager: results would never change")
	}
	if p.running {
		t.Error("the module started the Prober; the agent runs it")
	}
}
