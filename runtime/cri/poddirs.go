package cri

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/internal/mount"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// instanceFile, in a pod directory, holds the InstanceID of the manager that
// made it: GarbageCollect removes only its own pod directories, so agents
// that share a root directory never remove each other's.
const instanceFile = "nodekit-instance"

// ensurePodDir creates <RootDir>/pods/<uid>, marks it as this manager's
// and returns it. A UID that is not one path element is an error.
func (m *Manager) ensurePodDir(uid types.UID) (string, error) {
	dir, err := m.podDir(uid)
	if err != nil {
		return "", err
	}
	marker := filepath.Join(dir, instanceFile)
	if _, err := os.Stat(marker); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", err
	}
	return dir, os.WriteFile(marker, []byte(m.cfg.InstanceID), 0o644)
}

// newTerminationMessageFile creates the empty host file that backs one
// container instance's terminationMessagePath:
// <RootDir>/pods/<uid>/containers/<name>/<random>, writable by any user.
func (m *Manager) newTerminationMessageFile(pod *corev1.Pod, c *corev1.Container) (string, error) {
	podDir, err := m.podDir(pod.UID)
	if err != nil {
		return "", err
	}
	dir, err := pathUnder(podDir, "containers", c.Name)
	if err != nil {
		return "", fmt.Errorf("termination message directory of container %q: %w", c.Name, err)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", fmt.Errorf("termination message directory of container %q: %w", c.Name, err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%08x", rand.Uint32()))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o666)
	if err != nil {
		return "", fmt.Errorf("termination message file of container %q: %w", c.Name, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("termination message file of container %q: %w", c.Name, err)
	}
	// The umask narrowed the mode; any user in the container may write it.
	if err := os.Chmod(path, 0o666); err != nil {
		return "", fmt.Errorf("termination message file of container %q: %w", c.Name, err)
	}
	return path, nil
}

// removePodDir unmounts whatever is mounted below the pod's directory (the
// subPath bind mounts, the tmpfs of Memory emptyDirs) and removes the
// directory. Nothing is removed while a mount remains below it. The caller
// guarantees nothing of the pod runs.
func (m *Manager) removePodDir(uid types.UID) error {
	dir, err := m.podDir(uid)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := mount.CleanSubPaths(dir); err != nil {
		return fmt.Errorf("subPath mounts of pod %s: %w", uid, err)
	}
	if err := mount.UnmountBelow(dir); err != nil {
		return fmt.Errorf("unmount volumes of pod %s: %w", uid, err)
	}
	if err := noMountBelow(dir); err != nil {
		return fmt.Errorf("remove directory of pod %s: %w", uid, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove directory of pod %s: %w", uid, err)
	}
	m.log.V(2).Info("removed pod directory", "podUID", uid)
	return nil
}

// removeOrphanPodDirs removes this manager's pod directories, and the pod
// cgroups, of pods that are removed and have nothing left in the runtime
// (present lists the pods that do) and whose volumes the volume manager no
// longer holds (when it is a runtime.VolumeHolder): the volume manager
// tears those down first.
func (m *Manager) removeOrphanPodDirs(isPodRemoved func(types.UID) bool, present map[types.UID]bool) []error {
	m.mu.RLock()
	holder, _ := m.volumes.(noderuntime.VolumeHolder)
	m.mu.RUnlock()
	entries, err := os.ReadDir(filepath.Join(m.cfg.RootDir, "pods"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return []error{fmt.Errorf("list pod directories: %w", err)}
	}
	var errs []error
	for _, e := range entries {
		uid := types.UID(e.Name())
		if !e.IsDir() || present[uid] || !isPodRemoved(uid) || !m.ownsPodDir(uid) {
			continue
		}
		if holder != nil && holder.PodVolumesExist(uid) {
			m.log.V(4).Info("keeping pod directory: the volume manager still holds its volumes", "podUID", uid)
			continue
		}
		// The directory marks the pod's cgroup as this manager's: it goes
		// only after the cgroup.
		if err := m.cgroups.remove(uid); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := m.removePodDir(uid); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// ownsPodDir reports whether this manager made the pod's directory.
func (m *Manager) ownsPodDir(uid types.UID) bool {
	dir, err := m.podDir(uid)
	if err != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join(dir, instanceFile))
	return err == nil && string(b) == m.cfg.InstanceID
}

// noMountBelow returns an error when anything is still mounted at or below
// dir: os.RemoveAll would remove through it.
func noMountBelow(dir string) error {
	points, err := mount.Points()
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	for p := range points {
		if within(p, real) {
			return fmt.Errorf("%s is still mounted", p)
		}
	}
	return nil
}
