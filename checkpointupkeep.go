package nodekit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/runnable"
)

// servicePrunePeriod is how often the service checkpoint drops the
// namespaces no checkpointed pod is in.
const servicePrunePeriod = 5 * time.Minute

type upkeepParams struct {
	fx.In

	Cfg      Config
	Services *checkpointedServices `optional:"true"`
	Clock    clock.WithTicker
	Log      logr.Logger
}

// upkeep keeps the checkpoints to what they are for.
type upkeep struct {
	cfg      Config
	services *checkpointedServices // nil: no service checkpoint
	clk      clock.WithTicker
	log      logr.Logger
}

// checkpointUpkeep is the checkpoints' upkeep. At start it removes what
// an earlier run left of a checkpoint that is now off: the object copies
// (RootDir/pod-checkpoint-objects) with the object checkpoint off, so that
// no Secret or token stays on persistent disk, and the service checkpoint
// with the pod checkpoint off. At start and every servicePrunePeriod, the
// service checkpoint drops the namespaces no checkpointed pod is in (the
// default namespace, whose Services every pod's environment reads, stays).
func checkpointUpkeep(p upkeepParams) runnable.Runnable {
	u := &upkeep{cfg: p.Cfg, services: p.Services, clk: p.Clock, log: p.Log.WithName("checkpoints")}
	return runnable.Runnable{Name: "checkpoint upkeep", Run: u.run}
}

func (u *upkeep) run(ctx context.Context) error {
	u.removeLeftovers()
	if u.services == nil {
		<-ctx.Done()
		return nil
	}
	t := u.clk.NewTicker(servicePrunePeriod)
	defer t.Stop()
	for {
		u.pruneServices()
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// removeLeftovers removes the checkpoints that are off.
func (u *upkeep) removeLeftovers() {
	var off []string
	if !u.cfg.PodCheckpointObjects {
		off = append(off, objectCopiesDir)
	}
	if u.cfg.APISource.CheckpointDir == "" {
		off = append(off, serviceCheckpointsDir)
	}
	for _, d := range off {
		dir := filepath.Join(u.cfg.RootDir, d)
		if _, err := os.Lstat(dir); err != nil {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			u.log.Error(err, "Failed to remove a checkpoint that is off", "dir", dir)
			continue
		}
		u.log.Info("Removed a checkpoint that is off", "dir", dir)
	}
}

// pruneServices drops the saved Services of the namespaces no
// checkpointed pod is in; when the pod checkpoint cannot be read, it
// drops none.
func (u *upkeep) pruneServices() {
	// Files are stamped with the wall clock: what was written after the
	// pod checkpoint was read stays until the next prune.
	read := time.Now()
	keep, err := checkpointedNamespaces(u.cfg.APISource.CheckpointDir)
	if err == nil {
		err = u.services.prune(keep, read)
	}
	if err != nil {
		u.log.Error(err, "Failed to prune the service checkpoint")
	}
}

// checkpointedNamespaces are the namespaces of the pods in the pod
// checkpoint dir, and the default namespace.
func checkpointedNamespaces(dir string) (map[string]bool, error) {
	keep := map[string]bool{metav1.NamespaceDefault: true}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return keep, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the pod checkpoint: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") || !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		var pod struct {
			Metadata struct {
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err == nil {
			err = json.Unmarshal(data, &pod)
		}
		if err != nil {
			return nil, fmt.Errorf("read checkpointed pod %s: %w", name, err)
		}
		keep[pod.Metadata.Namespace] = true
	}
	return keep, nil
}
