package cri

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"

	"github.com/nodekit/nodekit/internal/mount"
)

// podVolumes are a pod's volumes set up on the host, by volume name, with
// the pod's directory (where subPath mounts go) and whether its runtime
// handler supports recursive read-only mounts.
type podVolumes struct {
	podDir string
	byName map[string]noderuntime.Volume
	rro    bool
}

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
func (m *Manager) resolveVolumes(ctx context.Context, pod *corev1.Pod) (podVolumes, error) {
	dir, err := m.ensurePodDir(pod.UID)
	if err != nil {
		return podVolumes{}, fmt.Errorf("pod directory of %s: %w: %w", formatPod(pod), noderuntime.ErrCreateContainer, err)
	}
	vols := podVolumes{podDir: dir, rro: m.podSupportsRecursiveReadOnly(ctx, pod)}
	if len(pod.Spec.Volumes) == 0 {
		return vols, nil
	}
	m.mu.RLock()
	getter := m.volumes
	m.mu.RUnlock()
	if getter == nil {
		return podVolumes{}, &volumeError{volume: pod.Spec.Volumes[0].Name, err: errNoVolumeManager}
	}
	vols.byName = getter.PodVolumes(pod.UID)
	for i := range pod.Spec.Volumes {
		if _, ok := vols.byName[pod.Spec.Volumes[i].Name]; !ok {
			return podVolumes{}, &volumeError{volume: pod.Spec.Volumes[i].Name, err: errors.New("not set up by the volume manager")}
		}
	}
	return vols, nil
}

// containerMounts turns c's volumeMounts into CRI mounts: a subPath (or
// subPathExpr, expanded with the container's environment) must be relative
// and stay inside its volume, is created there when missing, and is
// bind-mounted safely under the pod's directory (see subPath); a
// recursiveReadOnly mount follows the kubelet's rules.
func containerMounts(c *corev1.Container, vols podVolumes, env func(string) (string, bool)) ([]*runtimeapi.Mount, error) {
	if len(c.VolumeDevices) > 0 {
		return nil, fmt.Errorf("%w: container %q: volumeDevices are not supported yet", noderuntime.ErrConfig, c.Name)
	}
	mounts := make([]*runtimeapi.Mount, 0, len(c.VolumeMounts)+1)
	for i, vm := range c.VolumeMounts {
		vol, ok := vols.byName[vm.Name]
		if !ok {
			return nil, fmt.Errorf("%w: container %q: volumeMount %q names no volume of the pod", noderuntime.ErrConfig, c.Name, vm.Name)
		}
		rro, err := recursiveReadOnly(vm, vols.rro)
		if err != nil {
			return nil, fmt.Errorf("%w: container %q: volumeMount %q at %s: %w", noderuntime.ErrConfig, c.Name, vm.Name, vm.MountPath, err)
		}
		host := vol.HostPath
		sub := vm.SubPath
		if vm.SubPathExpr != "" {
			sub = expand(vm.SubPathExpr, env)
		}
		if sub != "" {
			p, err := subPath(vol, sub, vols.podDir, c.Name, vm.Name, i)
			if err != nil {
				return nil, fmt.Errorf("%w: container %q: volumeMount %q: subPath %q: %w", noderuntime.ErrConfig, c.Name, vm.Name, sub, err)
			}
			host = p
		}
		mounts = append(mounts, &runtimeapi.Mount{
			ContainerPath: vm.MountPath, HostPath: host, Readonly: vm.ReadOnly || vol.ReadOnly,
			RecursiveReadOnly: rro, Propagation: propagation(vm.MountPropagation),
		})
	}
	return mounts, nil
}

// subPathsDir, in a pod's directory, holds the bind mounts of its
// containers' subPaths (mount.SubPathsDir).
const subPathsDir = mount.SubPathsDir

// subPath makes sub inside vol the source of the index-th volumeMount of
// container and returns the host path to hand to the runtime: a bind mount
// under the pod's directory of what sub named when it was opened, never
// the path inside the volume, which a container sharing the volume may
// change. What is missing of sub is created as directories with the
// volume's mode, as the kubelet's SafeMakeDir does: each new directory
// gets the mode of the volume's root, setgid and sticky bits included and
// whatever the umask, and so an emptyDir with an fsGroup passes its group
// on to them. It refuses an absolute path, "..", and a symlink that points
// outside the volume, before it creates anything there.
func subPath(vol noderuntime.Volume, sub, podDir, container, volume string, index int) (string, error) {
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
	target, err := pathUnder(podDir, subPathsDir, volume, container, strconv.Itoa(index))
	if err != nil {
		return "", err
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
	if err := bindSubPath(root, sub, mode, target); err != nil {
		return "", err
	}
	return target, nil
}

// splitSubPath is the components of a subPath, without empty ones and ".".
func splitSubPath(sub string) []string {
	var out []string
	for _, part := range strings.Split(filepath.ToSlash(sub), "/") {
		if part != "" && part != "." {
			out = append(out, part)
		}
	}
	return out
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
