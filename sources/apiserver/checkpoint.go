package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nodekit/nodekit/internal/atomicfile"
	"github.com/nodekit/nodekit/sources"
)

// checkpointSuffix ends the name of every checkpoint file; temporary files
// start with a dot and never end with it.
const checkpointSuffix = ".json"

// checkpoint is the on-disk copy of the pods the API server bound to this
// node: one JSON file per pod, named <uid>.json, in dir. Each file is
// written atomically (a temporary file, fsync, rename, fsync of the
// directory), so a crash leaves either the old or the new version. The
// directory itself exists once a first list was saved: its absence means
// "never synced", not "no pods". Not safe for concurrent use: only the
// Source's loop uses it.
type checkpoint struct {
	dir string
	log logr.Logger
	// written is the content of each file as last written or read, so that
	// unchanged pods are not written again.
	written map[types.UID][]byte
}

func newCheckpoint(dir string, log logr.Logger) *checkpoint {
	return &checkpoint{dir: dir, log: log.WithName("checkpoint"), written: map[types.UID][]byte{}}
}

// checkpointed reports whether the pod belongs in the checkpoint: mirror
// pods do not (they stand for static pods that another source runs), nor
// does a pod whose UID cannot be a file name.
func checkpointed(pod *corev1.Pod) bool {
	_, mirror := pod.Annotations[sources.AnnotationMirror]
	uid := string(pod.UID)
	return !mirror && uid != "" && !strings.HasPrefix(uid, ".") && !strings.ContainsAny(uid, "/\\\x00")
}

// save makes the checkpoint hold exactly pods (mirror pods left out): it
// writes the pods that changed and removes the files of pods that are gone.
// It does not keep pods. It returns the first error and goes on with the
// other pods.
func (c *checkpoint) save(pods []*corev1.Pod) error {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("create checkpoint directory: %w", err)
	}
	var errs []error
	keep := map[types.UID]bool{}
	for _, pod := range pods {
		if !checkpointed(pod) {
			continue
		}
		keep[pod.UID] = true
		data, err := json.Marshal(pod)
		if err != nil {
			errs = append(errs, fmt.Errorf("encode pod %s: %w", klog.KObj(pod), err))
			continue
		}
		if bytes.Equal(c.written[pod.UID], data) {
			continue
		}
		if err := c.write(pod.UID, data); err != nil {
			errs = append(errs, err)
			continue
		}
		c.written[pod.UID] = data
		c.log.V(4).Info("Checkpointed pod", "pod", klog.KObj(pod), "podUID", pod.UID)
	}
	if err := c.removeAllBut(keep); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// write replaces the pod's file atomically and durably.
func (c *checkpoint) write(uid types.UID, data []byte) error {
	if err := atomicfile.Write(c.path(uid), data, 0o600); err != nil {
		return fmt.Errorf("checkpoint pod %s: %w", uid, err)
	}
	return nil
}

// removeAllBut removes every checkpoint file, and every leftover temporary
// file, of a pod not in keep.
func (c *checkpoint) removeAllBut(keep map[types.UID]bool) error {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return fmt.Errorf("read checkpoint directory: %w", err)
	}
	var errs []error
	removed := false
	for _, e := range entries {
		name := e.Name()
		uid, isPod := strings.CutSuffix(name, checkpointSuffix)
		if isPod && keep[types.UID(uid)] {
			continue
		}
		if !isPod && !strings.HasSuffix(name, ".tmp") {
			continue
		}
		if err := os.Remove(filepath.Join(c.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove checkpoint %s: %w", name, err))
			continue
		}
		if isPod {
			delete(c.written, types.UID(uid))
			removed = true
			c.log.V(4).Info("Removed pod from the checkpoint", "podUID", uid)
		}
	}
	if removed {
		if err := atomicfile.SyncDir(c.dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// load reads the checkpointed pods, sorted by file name. found is false
// when there is no checkpoint directory: the API server was never listed.
// A file that cannot be read or decoded is logged and skipped. The caller
// owns the pods.
func (c *checkpoint) load() (pods []*corev1.Pod, found bool, err error) {
	entries, err := os.ReadDir(c.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read checkpoint directory: %w", err)
	}
	pods = []*corev1.Pod{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, checkpointSuffix) || strings.HasPrefix(name, ".") || !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(c.dir, name))
		if err != nil {
			c.log.Error(err, "Skipping unreadable checkpoint file", "file", name)
			continue
		}
		pod := &corev1.Pod{}
		if err := json.Unmarshal(data, pod); err != nil || !checkpointed(pod) || string(pod.UID)+checkpointSuffix != name {
			c.log.Error(err, "Skipping checkpoint file that holds no pod of its name", "file", name)
			continue
		}
		c.written[pod.UID] = data
		pods = append(pods, pod)
	}
	return pods, true, nil
}

func (c *checkpoint) path(uid types.UID) string {
	return filepath.Join(c.dir, string(uid)+checkpointSuffix)
}
