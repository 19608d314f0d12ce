package volumes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"
)

// readyFileName marks a volume whose set-up completed, as the kubelet's
// emptyDir plugin marks one: <RootDir>/pods/<uid>/plugins/<plugin>/<name>/ready.
// It is beside the pod's volumes, not in them, so that no container can
// remove it.
const readyFileName = "ready"

// pluginsDir is <RootDir>/pods/<uid>/plugins, the volume plugins' own
// files of the pod.
func (m *VolumeManager) pluginsDir(uid types.UID) string {
	return filepath.Join(m.cfg.RootDir, "pods", string(uid), "plugins")
}

// readyFile is the marker of the pod's volume name of plugin.
func (m *VolumeManager) readyFile(uid types.UID, plugin, name string) string {
	return filepath.Join(m.pluginsDir(uid), plugin, name, readyFileName)
}

// isReady reports whether a set-up of the volume at dir completed, in this
// run of the agent or an earlier one, and the volume is still there: its
// directory and, for a tmpfs volume, the tmpfs (a reboot removes it). A
// marker without its volume is removed, so that the volume is made anew.
func (m *VolumeManager) isReady(uid types.UID, plugin, name, dir string, tmpfs bool) bool {
	ready := m.readyFile(uid, plugin, name)
	if info, err := os.Lstat(ready); err != nil || !info.Mode().IsRegular() {
		return false
	}
	there := false
	if info, err := os.Lstat(dir); err == nil && info.IsDir() {
		there = !tmpfs || m.tmpfsMounted(dir)
	}
	if !there {
		m.log.V(2).Info("volume marked ready is gone; setting it up again", "podUID", uid, "volume", name)
		if err := os.Remove(ready); err != nil && !errors.Is(err, os.ErrNotExist) {
			m.log.Error(err, "Failed to remove a volume's ready marker", "podUID", uid, "volume", name)
		}
	}
	return there
}

// setReady marks the volume set up.
func (m *VolumeManager) setReady(uid types.UID, plugin, name string) error {
	ready := m.readyFile(uid, plugin, name)
	if err := os.MkdirAll(filepath.Dir(ready), 0o750); err != nil {
		return fmt.Errorf("mark volume %s of pod %s ready: %w", name, uid, err)
	}
	if err := os.WriteFile(ready, nil, 0o600); err != nil {
		return fmt.Errorf("mark volume %s of pod %s ready: %w", name, uid, err)
	}
	return nil
}
