package pleg

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestModule(t *testing.T) {
	t.Parallel()
	clk := testingclock.NewFakeClock(epoch)
	rt := newFakeRuntime()
	rt.setPods(pod("a", ctr("c1", run)))
	var (
		plg   Interface
		cache *Cache
	)
	app := fxtest.New(t,
		Module,
		fx.Provide(
			func() noderuntime.Runtime { return rt },
			func() clock.Clock { return clk },
			func() clock.WithTicker { return clk },
			func() logr.Logger { return logr.Discard() },
			func() prometheus.Registerer { return prometheus.NewRegistry() },
		),
		fx.Supply(Config{}),
		fx.Populate(&plg, &cache),
	)
	app.RequireStart()
	defer app.RequireStop()

	g, ok := plg.(*Generic)
	if !ok {
		t.Fatalf("Module provides %T as Interface, want *Generic", plg)
	}
	if g.cache != cache {
		t.Error("the PLEG writes to a different *Cache than the one provided")
	}
	if rt.listCalls != 0 {
		t.Error("the module started relisting; the agent runs the PLEG")
	}
	g.Relist(context.Background())
	if s, err := cache.Get("a"); err != nil || s.Name != "pod-a" {
		t.Errorf("cache.Get(a) after a relist through the module = %+v, %v", s, err)
	}
}
