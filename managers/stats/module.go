package stats

import (
	"github.com/go-logr/logr"
	"go.uber.org/fx"
	criapi "k8s.io/cri-api/pkg/apis"
	"k8s.io/utils/clock"
)

// Module provides the CRI stats provider as Provider. It needs the CRI
// runtime and image services, a clock.Clock, a logr.Logger and a Config,
// and takes a VolumeLister at construction when one is provided (nodekit
// binds the volume manager to it).
var Module = fx.Module("stats",
	fx.Provide(fx.Annotate(newFromParams, fx.As(new(Provider)))),
)

type params struct {
	fx.In

	RuntimeService criapi.RuntimeService
	ImageService   criapi.ImageManagerService
	Clock          clock.Clock
	Log            logr.Logger
	Config         Config
	Volumes        VolumeLister `optional:"true"`
}

// newFromParams is NewCRI with the pods' volumes given at construction.
func newFromParams(p params) *CRI {
	c := NewCRI(p.RuntimeService, p.ImageService, p.Clock, p.Log, p.Config)
	c.SetVolumes(p.Volumes)
	return c
}
