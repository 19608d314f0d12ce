package nodestatus

import (
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

func TestModuleProvidesReporterAndHostMachine(t *testing.T) {
	t.Parallel()
	var (
		m  Manager
		mi MachineInfo
	)
	app := fxtest.New(t,
		fx.NopLogger,
		fx.Provide(
			func() kubernetes.Interface { return fake.NewClientset() },
			func() RuntimeInfo { return &fakeRuntime{} },
			func() HealthSource { return &fakeHealth{} },
			func() clock.WithTicker { return testingclock.NewFakeClock(t0) },
			func() logr.Logger { return logr.Discard() },
			func() Config { return Config{NodeName: "node-1", RootDir: "/data"} },
		),
		Module,
		fx.Populate(&m, &mi),
	)
	app.RequireStart().RequireStop()
	if _, ok := m.(*Reporter); !ok {
		t.Errorf("Manager is %T, want *Reporter", m)
	}
	if h, ok := mi.(*HostMachine); !ok || h.rootDir != "/data" {
		t.Errorf("MachineInfo is %#v, want a *HostMachine for /data", mi)
	}
}
