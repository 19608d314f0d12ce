package nodekit

import (
	"path/filepath"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/internal/objectcache"
	"github.com/nodekit/nodekit/managers/env"
	"github.com/nodekit/nodekit/managers/volumes"
	"github.com/nodekit/nodekit/sources/apiserver"
)

// offlineContentsWiring gives the volume manager and the env builder one
// store of the objects and tokens of checkpointed pods
// (RootDir/pod-checkpoint-objects), used while the API source serves its
// checkpoint and an object cannot be fetched, so that the pods' secret,
// configMap and projected volumes and their env can be made again after a
// reboot with the API server away. The store reaches both as constructor
// parameters (volumes.OfflineStore, env.OfflineObjects), so a replaced
// Manager or EnvSource may take it too. None with the pod checkpoint off.
func offlineContentsWiring() fx.Option {
	return fx.Provide(offlineContents)
}

type offlineContentsParams struct {
	fx.In

	Cfg       Config
	APISource *apiserver.Source `optional:"true"`
	Clock     clock.Clock
	Log       logr.Logger
}

// offlineStores is the one store under both names; both are nil without
// an API source or with the pod checkpoint off.
type offlineStores struct {
	fx.Out

	Volumes volumes.OfflineStore
	Env     env.OfflineObjects
}

func offlineContents(p offlineContentsParams) offlineStores {
	if p.APISource == nil || p.Cfg.APISource.CheckpointDir == "" {
		return offlineStores{}
	}
	store := objectcache.New(objectcache.Config{
		Dir:           filepath.Join(p.Cfg.RootDir, "pod-checkpoint-objects"),
		CheckpointDir: p.Cfg.APISource.CheckpointDir,
	}, p.APISource, p.Clock, p.Log)
	return offlineStores{Volumes: store, Env: store}
}
