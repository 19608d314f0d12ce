package volumes_test

import (
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/managers/volumes"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestModuleProvidesTheManager(t *testing.T) {
	var m volumes.Manager
	app := fxtest.New(t,
		volumes.Module,
		fx.Supply(logr.Discard(), volumes.Config{}),
		fx.Provide(
			func() clock.WithTicker { return clock.RealClock{} },
			func() volumes.EventRecorder { return noderuntime.LogRecorder{Log: logr.Discard()} },
		),
		fx.Populate(&m),
	)
	app.RequireStart().RequireStop()
	if _, ok := m.(*volumes.VolumeManager); !ok {
		t.Fatalf("Manager is %T, want *volumes.VolumeManager", m)
	}
}
