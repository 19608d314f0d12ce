package stats

import (
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	criapi "k8s.io/cri-api/pkg/apis"
	"k8s.io/utils/clock"
)

func TestModule(t *testing.T) {
	t.Parallel()
	f := newFakeRuntime()
	var p Provider
	app := fxtest.New(t,
		Module,
		fx.Provide(
			func() criapi.RuntimeService { return f.rs },
			func() criapi.ImageManagerService { return f.is },
			func() clock.Clock { return f.clk },
			func() logr.Logger { return logr.Discard() },
		),
		fx.Supply(Config{NodeName: "n1"}),
		fx.Populate(&p),
	)
	app.RequireStart()
	defer app.RequireStop()
	if c, ok := p.(*CRI); !ok || c.cfg.NodeName != "n1" {
		t.Fatalf("Module provides %T (%+v) as Provider, want *CRI with the supplied Config", p, p)
	}
}
