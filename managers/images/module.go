package images

import (
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	criapi "k8s.io/cri-api/pkg/apis"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Params are the GC's dependencies under fx. ImageFs and Filter are
// optional: the default reads the image filesystem through CRI and
// considers every image.
type Params struct {
	fx.In

	Images   criapi.ImageManagerService
	Runtime  criapi.RuntimeService
	ImageFs  ImageFs `optional:"true"`
	Filter   Filter  `optional:"true"`
	Events   noderuntime.EventRecorder
	Clock    clock.WithTicker
	Registry prometheus.Registerer
	Log      logr.Logger
	Config   Config
}

// New builds the GC from fx parameters; it does no I/O.
func New(p Params) *GC {
	fs := p.ImageFs
	if fs == nil {
		fs = CRIImageFs{Runtime: p.Images}
	}
	return NewGC(p.Images, p.Runtime, fs, p.Events, p.Clock, p.Registry, p.Log, p.Config, p.Filter)
}

// Module provides the image GC as Manager. It does not run it: the agent
// runs it with the other subsystems.
var Module = fx.Module("images",
	fx.Provide(fx.Annotate(New, fx.As(new(Manager)))),
)
