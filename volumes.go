package nodekit

import (
	"go.uber.org/fx"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/managers/objects"
	"github.com/nodekit/nodekit/managers/volumes"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// volumeWiring gives the volume manager the object caches and the token
// manager (nil without an API server), the node's allocatable resources
// (the default of downward API limits), and connects the runtime, when it
// mounts volumes (runtime.VolumeAware), and the stats provider (the pods'
// volume stats) to the volume manager.
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
		),
		fx.Invoke(connectVolumes, connectStatsVolumes),
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

	Runtime noderuntime.Runtime
	Volumes volumes.Manager `optional:"true"`
}

// connectVolumes hands the runtime the volume manager's volumes.
func connectVolumes(p volumeParams) {
	if va, ok := p.Runtime.(noderuntime.VolumeAware); ok && p.Volumes != nil {
		va.SetVolumeGetter(p.Volumes)
	}
}
