package nodekit

import (
	"go.uber.org/fx"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/managers/volumes"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// volumeWiring gives the volume manager the node's allocatable resources
// (the default of downward API limits) and connects the runtime, when it
// mounts volumes (runtime.VolumeAware), to the volume manager.
func volumeWiring() fx.Option {
	return fx.Options(
		fx.Provide(func(n agent.NodeResources) volumes.NodeResources {
			if n == nil {
				return nil
			}
			return n
		}),
		fx.Invoke(connectVolumes),
	)
}

type volumeParams struct {
	fx.In

	Runtime noderuntime.Runtime
	Volumes volumes.Manager `optional:"true"`
}

// connectVolumes hands the runtime the volume manager's volumes.
func connectVolumes(p volumeParams) {
	if va, ok := p.Runtime.(noderuntime.VolumeAware); ok && p.Volumes != nil {
		va.SetVolumeGetter(p.Volumes)
	}
}
