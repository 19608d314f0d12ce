package cri

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// podVolumes are a pod's volumes set up on the host, by volume name.
type podVolumes map[string]noderuntime.Volume

// volumeError is a volume that is not set up; it wraps runtime.ErrConfig,
// so the containers wait with reason CreateContainerConfigError.
type volumeError struct {
	volume string
	err    error
}

func (e *volumeError) Error() string   { return fmt.Sprintf("volume %s: %v", e.volume, e.err) }
func (e *volumeError) Unwrap() []error { return []error{noderuntime.ErrConfig, e.err} }

// errNoVolumeManager is the cause of a volume the runtime was given no
// volume manager for.
var errNoVolumeManager = errors.New("no volume manager is set (runtime.VolumeAware)")

// podDir is <RootDir>/pods/<uid>: the pod's volumes and per-container files.
func (m *Manager) podDir(uid types.UID) string {
	return filepath.Join(m.cfg.RootDir, "pods", string(uid))
}

// SetVolumeGetter implements runtime.VolumeAware: containers mount the
// volumes getter reports for their pod (the volume manager sets them up
// before SyncPod). Safe for concurrent use.
func (m *Manager) SetVolumeGetter(getter noderuntime.VolumeGetter) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.volumes = getter
}

// resolveVolumes returns the host side of every volume of the pod, as the
// volume manager set them up, after making sure the pod's directory exists.
// A volume that is not set up is an error wrapping runtime.ErrConfig that
// names it.
func (m *Manager) resolveVolumes(pod *corev1.Pod) (podVolumes, error) {
	if err := m.ensurePodDir(pod.UID); err != nil {
		return nil, fmt.Errorf("pod directory of %s: %w: %w", formatPod(pod), noderuntime.ErrCreateContainer, err)
	}
	if len(pod.Spec.Volumes) == 0 {
		return podVolumes{}, nil
	}
	m.mu.RLock()
	getter := m.volumes
	m.mu.RUnlock()
	if getter == nil {
		return nil, &volumeError{volume: pod.Spec.Volumes[0].Name, err: errNoVolumeManager}
	}
	vols := podVolumes(getter.PodVolumes(pod.UID))
	for i := range pod.Spec.Volumes {
		if _, ok := vols[pod.Spec.Volumes[i].Name]; !ok {
			return nil, &volumeError{volume: pod.Spec.Volumes[i].Name, err: errors.New("not set up by the volume manager")}
		}
	}
	return vols, nil
}

// containerMounts turns c's volumeMounts into CRI mounts: a subPath (or
// subPathExpr, expanded with the container's environment) must be relative
// and stay inside its volume, and is created there when missing.
func containerMounts(c *corev1.Container, vols podVolumes, env func(string) (string, bool)) ([]*runtimeapi.Mount, error) {
	if len(c.VolumeDevices) > 0 {
		return nil, fmt.Errorf("%w: container %q: volumeDevices are not supported yet", noderuntime.ErrConfig, c.Name)
	}
	mounts := make([]*runtimeapi.Mount, 0, len(c.VolumeMounts)+1)
	for _, vm := range c.VolumeMounts {
		vol, ok := vols[vm.Name]
		if !ok {
			return nil, fmt.Errorf("%w: container %q: volumeMount %q names no volume of the pod", noderuntime.ErrConfig, c.Name, vm.Name)
		}
		host := vol.HostPath
		sub := vm.SubPath
		if vm.SubPathExpr != "" {
			sub = expand(vm.SubPathExpr, env)
		}
		if sub != "" {
			p, err := subPath(vol, sub)
			if err != nil {
				return nil, fmt.Errorf("%w: container %q: volumeMount %q: subPath %q: %w", noderuntime.ErrConfig, c.Name, vm.Name, sub, err)
			}
			host = p
		}
		mounts = append(mounts, &runtimeapi.Mount{
			ContainerPath: vm.MountPath, HostPath: host, Readonly: vm.ReadOnly || vol.ReadOnly,
			Propagation: propagation(vm.MountPropagation),
		})
	}
	return mounts, nil
}

// subPath returns the host path of sub inside vol, creating what is missing
// of it as directories with the volume's mode, as the kubelet's
// SafeMakeDir does: each new directory gets the mode of the volume's root,
// setgid and sticky bits included and whatever the umask, and so an
// emptyDir with an fsGroup passes its group on to them. It refuses an
// absolute path, "..", and a path that resolves (through symlinks) outside
// the volume, before it creates anything there.
func subPath(vol noderuntime.Volume, sub string) (string, error) {
	if filepath.IsAbs(sub) {
		return "", errors.New("must be a relative path")
	}
	for _, part := range strings.Split(filepath.ToSlash(sub), "/") {
		if part == ".." {
			return "", errors.New("must not contain '..'")
		}
	}
	if !vol.Dir {
		return "", errors.New("the volume is not a directory")
	}
	root, err := filepath.EvalSymlinks(vol.HostPath)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(root)
	if err != nil {
		return "", err
	}
	mode := info.Mode() & (os.ModePerm | os.ModeSetgid | os.ModeSetuid | os.ModeSticky)
	current := root
	for _, part := range strings.Split(filepath.ToSlash(filepath.Clean(sub)), "/") {
		if part == "" || part == "." {
			continue
		}
		next := filepath.Join(current, part)
		st, err := os.Lstat(next)
		switch {
		case errors.Is(err, os.ErrNotExist):
			if err := os.Mkdir(next, mode.Perm()); err != nil && !errors.Is(err, os.ErrExist) {
				return "", err
			}
			// The umask trimmed the mode mkdir set, which never
			// has the setgid and sticky bits.
			if err := os.Chmod(next, mode); err != nil {
				return "", err
			}
		case err != nil:
			return "", err
		case st.Mode()&os.ModeSymlink != 0:
			if next, err = filepath.EvalSymlinks(next); err != nil {
				return "", err
			}
		}
		if !within(next, root) {
			return "", fmt.Errorf("resolves to %s, outside the volume", next)
		}
		current = next
	}
	resolved, err := filepath.EvalSymlinks(current)
	if err != nil {
		return "", err
	}
	if !within(resolved, root) {
		return "", fmt.Errorf("resolves to %s, outside the volume", resolved)
	}
	return resolved, nil
}

// within reports whether path is root or below it.
func within(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// propagation maps a volumeMount's mountPropagation to CRI.
func propagation(p *corev1.MountPropagationMode) runtimeapi.MountPropagation {
	if p == nil {
		return runtimeapi.MountPropagation_PROPAGATION_PRIVATE
	}
	switch *p {
	case corev1.MountPropagationHostToContainer:
		return runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER
	case corev1.MountPropagationBidirectional:
		return runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL
	}
	return runtimeapi.MountPropagation_PROPAGATION_PRIVATE
}
