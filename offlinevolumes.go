package nodekit

import (
	"errors"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/internal/objectcache"
	"github.com/nodekit/nodekit/managers/env"
	"github.com/nodekit/nodekit/managers/volumes"
	"github.com/nodekit/nodekit/runnable"
	"github.com/nodekit/nodekit/sources/apiserver"
)

// objectCopiesDir is where the object checkpoint is, under RootDir.
const objectCopiesDir = "pod-checkpoint-objects"

// offlineContentsWiring gives the volume manager and the env builder one
// store of the objects and tokens of checkpointed pods
// (RootDir/pod-checkpoint-objects), used while the API source serves its
// checkpoint and an object cannot be fetched, so that the pods' secret,
// configMap and projected volumes and their env can be made again after a
// reboot with the API server away. The store reaches both as constructor
// parameters (volumes.OfflineStore, env.OfflineObjects), so a replaced
// Manager or EnvSource may take it too. There is one only with the object
// checkpoint on (Config.PodCheckpointObjects, an opt-in). It also runs the
// checkpoints' upkeep (checkpointUpkeep).
func offlineContentsWiring() fx.Option {
	return fx.Provide(offlineContents, serviceCheckpoint, runnable.As(checkpointUpkeep))
}

type offlineContentsParams struct {
	fx.In

	Cfg       Config
	APISource *apiserver.Source `optional:"true"`
	Clock     clock.Clock
	Log       logr.Logger
}

// offlineStores is the one store under both names; both are nil without
// an API source or with the object checkpoint off.
type offlineStores struct {
	fx.Out

	Volumes volumes.OfflineStore
	Env     env.OfflineObjects
}

// errObjectsWithoutPods refuses the object checkpoint without the pod
// checkpoint, whose pods it keeps the objects of.
var errObjectsWithoutPods = errors.New("podCheckpointObjects (--pod-checkpoint-objects) needs the pod checkpoint, which DisablePodCheckpoint (--pod-checkpoint=false) turns off")

func offlineContents(p offlineContentsParams) (offlineStores, error) {
	if p.Cfg.PodCheckpointObjects && p.Cfg.APISource.CheckpointDir == "" {
		return offlineStores{}, errObjectsWithoutPods
	}
	if p.APISource == nil || !p.Cfg.PodCheckpointObjects {
		return offlineStores{}, nil
	}
	copies := &offlineCopies{
		Store: objectcache.New(objectcache.Config{
			Dir:           filepath.Join(p.Cfg.RootDir, objectCopiesDir),
			CheckpointDir: p.Cfg.APISource.CheckpointDir,
		}, p.APISource, p.Clock, p.Log),
		checkpointDir: p.Cfg.APISource.CheckpointDir,
	}
	return offlineStores{Volumes: copies, Env: copies}, nil
}

// offlineCopies is the object checkpoint: the store, which also has the
// env builder forget what it logged of the pods whose copies go (the
// volume manager forgets its own with the pod). Safe for concurrent use.
type offlineCopies struct {
	*objectcache.Store
	checkpointDir string

	mu sync.Mutex
	// forget are the env builders' ForgetOffline.
	forget []func(gone func(types.UID) bool)
}

var (
	_ volumes.OfflineStore = (*offlineCopies)(nil)
	_ env.OfflineObjects   = (*offlineCopies)(nil)
)

// onForget makes f forget the pods whose copies go.
func (c *offlineCopies) onForget(f func(gone func(types.UID) bool)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forget = append(c.forget, f)
}

func (c *offlineCopies) forgetPods(gone func(types.UID) bool) {
	c.mu.Lock()
	fs := append([]func(func(types.UID) bool){}, c.forget...)
	c.mu.Unlock()
	for _, f := range fs {
		f(gone)
	}
}

// Forget removes the pod's copies, and what was logged of them.
func (c *offlineCopies) Forget(uid types.UID) error {
	err := c.Store.Forget(uid)
	c.forgetPods(func(u types.UID) bool { return u == uid })
	return err
}

// Prune removes the copies of the pods no longer in the pod checkpoint,
// and what was logged of them.
func (c *offlineCopies) Prune() error {
	err := c.Store.Prune()
	c.forgetPods(func(u types.UID) bool { return !podCheckpointed(c.checkpointDir, u) })
	return err
}

// podCheckpointed reports whether the pod's file is in the pod checkpoint.
func podCheckpointed(dir string, uid types.UID) bool {
	name := string(uid)
	if name == "" || name[0] == '.' || filepath.Base(name) != name {
		return false
	}
	info, err := os.Stat(filepath.Join(dir, name+".json"))
	return err == nil && info.Mode().IsRegular()
}
