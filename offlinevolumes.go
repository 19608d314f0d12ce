package nodekit

import (
	"path/filepath"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/internal/objectcache"
	"github.com/nodekit/nodekit/managers/env"
	"github.com/nodekit/nodekit/managers/volumes"
	"github.com/nodekit/nodekit/runtime/cri"
	"github.com/nodekit/nodekit/sources/apiserver"
)

// offlineContentsWiring gives the volume manager and the env builder one
// store of the objects and tokens of checkpointed pods
// (RootDir/pod-checkpoint-objects), used while the API source serves its
// checkpoint and an object cannot be fetched, so that the pods' secret,
// configMap and projected volumes and their env can be made again after a
// reboot with the API server away. Off with the pod checkpoint, and for a
// Manager or EnvSource an embedder replaced with one that takes no store.
func offlineContentsWiring() fx.Option {
	return fx.Invoke(connectOfflineContents)
}

type offlineContentsParams struct {
	fx.In

	Cfg       Config
	APISource *apiserver.Source `optional:"true"`
	Volumes   volumes.Manager   `optional:"true"`
	Env       cri.EnvSource     `optional:"true"`
	Clock     clock.Clock
	Log       logr.Logger
}

func connectOfflineContents(p offlineContentsParams) {
	if p.APISource == nil || p.Cfg.APISource.CheckpointDir == "" {
		return
	}
	store := objectcache.New(objectcache.Config{
		Dir:           filepath.Join(p.Cfg.RootDir, "pod-checkpoint-objects"),
		CheckpointDir: p.Cfg.APISource.CheckpointDir,
	}, p.APISource, p.Clock, p.Log)
	if v, ok := p.Volumes.(interface{ SetOfflineStore(volumes.OfflineStore) }); ok {
		v.SetOfflineStore(store)
	}
	if b, ok := p.Env.(*env.Builder); ok {
		b.SetOffline(store, p.Log)
	}
}
