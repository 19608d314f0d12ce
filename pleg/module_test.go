package pleg

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	criapi "k8s.io/cri-api/pkg/apis"
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

// noEvents is a CRI runtime service the module can hand to the evented
// PLEG; nothing calls it before Run.
type noEvents struct{ criapi.RuntimeService }

func TestModuleProvidesThePLEGTheConfigNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		service bool
		want    string
		wantErr string
	}{
		{name: "the zero config gives the generic PLEG", want: "*pleg.Generic"},
		{name: "kind evented gives the evented PLEG", cfg: Config{Kind: KindEvented}, service: true, want: "*pleg.Evented"},
		{name: "kind evented without a CRI runtime service fails", cfg: Config{Kind: KindEvented}, wantErr: "needs a CRI runtime service"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := testingclock.NewFakeClock(epoch)
			opts := []fx.Option{
				Module,
				fx.Provide(
					func() noderuntime.Runtime { return newFakeRuntime() },
					func() clock.Clock { return clk },
					func() clock.WithTicker { return clk },
					func() logr.Logger { return logr.Discard() },
					func() prometheus.Registerer { return prometheus.NewRegistry() },
				),
				fx.Supply(tt.cfg),
				fx.NopLogger,
			}
			if tt.service {
				opts = append(opts, fx.Provide(func() criapi.RuntimeService { return noEvents{} }))
			}
			var plg Interface
			app := fx.New(append(opts, fx.Populate(&plg))...)
			if err := app.Err(); err != nil {
				if tt.wantErr == "" || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("fx.New() = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if tt.wantErr != "" {
				t.Fatalf("fx.New() succeeded, want %q", tt.wantErr)
			}
			if got := fmt.Sprintf("%T", plg); got != tt.want {
				t.Errorf("Interface is a %s, want %s", got, tt.want)
			}
		})
	}
}
