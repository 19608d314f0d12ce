package nodekit

import (
	"go.uber.org/fx"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/managers/objects"
	"github.com/nodekit/nodekit/managers/stats"
	"github.com/nodekit/nodekit/managers/volumes"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// volumeWiring gives the volume manager the object caches and the token
// manager (nil without an API server) and the node's allocatable resources
// (the default of downward API limits), and gives the runtime (it mounts
// the volumes, runtime.VolumeGetter) and the stats provider (the pods'
// volume stats, stats.VolumeLister) the volume manager.
func volumeWiring() fx.Option {
	return fx.Options(
		fx.Provide(
			func(n agent.NodeResources) volumes.NodeResources {
				if n == nil {
					return nil
				}
				return n
			},
			volumeObjects,
			volumeTokens,
			runtimeVolumes,
			statsVolumes,
		),
	)
}

type volumeSourcesParams struct {
	fx.In

	Objects objects.Manager      `optional:"true"`
	Tokens  objects.TokenManager `optional:"true"`
}

// volumeObjects is the object caches as the volume manager's ObjectGetter,
// or nil. Only the agent's Registry registers pods with them.
func volumeObjects(p volumeSourcesParams) volumes.ObjectGetter {
	if p.Objects == nil || isNil(p.Objects) {
		return nil
	}
	return p.Objects
}

// volumeTokens is the token manager as the volume manager's TokenGetter,
// or nil.
func volumeTokens(p volumeSourcesParams) volumes.TokenGetter {
	if p.Tokens == nil || isNil(p.Tokens) {
		return nil
	}
	return p.Tokens
}

type volumeParams struct {
	fx.In

	Volumes volumes.Manager `optional:"true"`
}

// runtimeVolumes is the volume manager as the runtime's VolumeGetter, nil
// without one.
func runtimeVolumes(p volumeParams) noderuntime.VolumeGetter {
	if p.Volumes == nil || isNil(p.Volumes) {
		return nil
	}
	return p.Volumes
}

// statsVolumes is the volume manager's volume directories, which the
// pods' volume stats measure, when it lists them (the VolumeManager does);
// nil otherwise.
func statsVolumes(p volumeParams) stats.VolumeLister {
	if p.Volumes == nil || isNil(p.Volumes) {
		return nil
	}
	if l, ok := p.Volumes.(stats.VolumeLister); ok {
		return l
	}
	return nil
}
