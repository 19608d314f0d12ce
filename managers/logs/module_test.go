package logs

import (
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	criapi "k8s.io/cri-api/pkg/apis"
	critest "k8s.io/cri-api/pkg/apis/testing"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestModule(t *testing.T) {
	t.Parallel()
	var m Manager
	app := fxtest.New(t,
		Module,
		fx.Provide(
			func() criapi.RuntimeService { return critest.NewFakeRuntimeService() },
			func() clock.WithTicker { return clocktesting.NewFakeClock(now) },
			func() logr.Logger { return logr.Discard() },
		),
		fx.Supply(Config{MaxFiles: 3}),
		fx.Populate(&m),
	)
	app.RequireStart()
	defer app.RequireStop()
	if r, ok := m.(*Rotator); !ok || r.cfg.MaxFiles != 3 || r.cfg.MaxSize != DefaultMaxSize {
		t.Fatalf("Module provides %T as Manager, want *Rotator with the supplied Config and defaults", m)
	}
}
