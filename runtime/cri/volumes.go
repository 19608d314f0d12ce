package cri

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// emptyDirPlugin names emptyDir volumes' directory, as the kubelet does.
const emptyDirPlugin = "kubernetes.io~empty-dir"

// podVolumes are a pod's volumes set up on the host, by volume name.
type podVolumes map[string]podVolume

// podVolume is one volume on the host.
type podVolume struct {
	// hostPath is what a volumeMount without subPath binds.
	hostPath string
	// dir is whether hostPath is a directory, so a subPath may go into it.
	dir bool
}

// volumeError is a volume that cannot be set up; it wraps runtime.ErrConfig,
// so the containers wait with reason CreateContainerConfigError.
type volumeError struct {
	volume string
	err    error
}

func (e *volumeError) Error() string   { return fmt.Sprintf("volume %s: %v", e.volume, e.err) }
func (e *volumeError) Unwrap() []error { return []error{noderuntime.ErrConfig, e.err} }

// podDir is <RootDir>/pods/<uid>: the pod's volumes and per-container files.
func (m *Manager) podDir(uid types.UID) string {
	return filepath.Join(m.cfg.RootDir, "pods", string(uid))
}

// emptyDirPath is where the pod's emptyDir volume name lives.
func (m *Manager) emptyDirPath(uid types.UID, name string) string {
	return filepath.Join(m.podDir(uid), "volumes", emptyDirPlugin, name)
}

// setupVolumes makes every volume of the pod ready on the host: emptyDir
// directories (a tmpfs for medium Memory) and checked hostPaths. It is
// idempotent and cheap once done. Any other volume type is an error wrapping
// runtime.ErrConfig that names the volume and its type.
func (m *Manager) setupVolumes(pod *corev1.Pod) (podVolumes, error) {
	if err := m.ensurePodDir(pod.UID); err != nil {
		return nil, fmt.Errorf("pod directory of %s: %w: %w", formatPod(pod), noderuntime.ErrCreateContainer, err)
	}
	vols := make(podVolumes, len(pod.Spec.Volumes))
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		var (
			pv  podVolume
			err error
		)
		switch {
		case v.EmptyDir != nil:
			pv, err = m.setupEmptyDir(pod.UID, v.Name, v.EmptyDir)
		case v.HostPath != nil:
			pv, err = setupHostPath(v.HostPath)
		default:
			err = fmt.Errorf("type %s is not supported yet", volumeType(v))
		}
		if err != nil {
			return nil, &volumeError{volume: v.Name, err: err}
		}
		vols[v.Name] = pv
	}
	return vols, nil
}

// setupEmptyDir creates an emptyDir volume, world-writable as the kubelet
// makes it, and mounts a tmpfs on it for medium Memory (sizeLimit, when set,
// is its size). sizeLimit on disk is not enforced.
func (m *Manager) setupEmptyDir(uid types.UID, name string, src *corev1.EmptyDirVolumeSource) (podVolume, error) {
	dir := m.emptyDirPath(uid, name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return podVolume{}, err
	}
	switch src.Medium {
	case corev1.StorageMediumDefault:
	case corev1.StorageMediumMemory:
		var size int64
		if src.SizeLimit != nil {
			size = src.SizeLimit.Value()
		}
		if err := ensureTmpfs(dir, size); err != nil {
			return podVolume{}, fmt.Errorf("mount tmpfs: %w", err)
		}
	default:
		return podVolume{}, fmt.Errorf("emptyDir medium %q is not supported yet", src.Medium)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		return podVolume{}, err
	}
	return podVolume{hostPath: dir, dir: true}, nil
}

// setupHostPath checks a hostPath volume against its type, creating what
// DirectoryOrCreate and FileOrCreate ask for.
func setupHostPath(src *corev1.HostPathVolumeSource) (podVolume, error) {
	path := src.Path
	typ := corev1.HostPathUnset
	if src.Type != nil {
		typ = *src.Type
	}
	info, statErr := os.Stat(path)
	switch typ {
	case corev1.HostPathDirectoryOrCreate:
		if errors.Is(statErr, os.ErrNotExist) {
			if err := os.MkdirAll(path, 0o755); err != nil {
				return podVolume{}, err
			}
			info, statErr = os.Stat(path)
		}
	case corev1.HostPathFileOrCreate:
		if errors.Is(statErr, os.ErrNotExist) {
			// Like the kubelet, the parent directory is not created.
			f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o644)
			if err != nil {
				return podVolume{}, err
			}
			_ = f.Close()
			info, statErr = os.Stat(path)
		}
	}
	want, ok := hostPathCheckFor(typ)
	if !ok {
		return podVolume{}, fmt.Errorf("hostPath type %q is not supported", typ)
	}
	if want.what != "" && (statErr != nil || !want.is(info.Mode())) {
		return podVolume{}, fmt.Errorf("hostPath type check failed: %s is not %s", path, want.what)
	}
	return podVolume{hostPath: path, dir: statErr == nil && info.IsDir()}, nil
}

// hostPathCheck is what a hostPath type requires of the path.
type hostPathCheck struct {
	what string // "" for no check
	is   func(os.FileMode) bool
}

// hostPathCheckFor returns what a hostPath type requires; ok is false for
// an unknown type.
func hostPathCheckFor(typ corev1.HostPathType) (check hostPathCheck, ok bool) {
	switch typ {
	case corev1.HostPathUnset:
		return hostPathCheck{}, true
	case corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory:
		return hostPathCheck{"a directory", os.FileMode.IsDir}, true
	case corev1.HostPathFileOrCreate, corev1.HostPathFile:
		return hostPathCheck{"a file", os.FileMode.IsRegular}, true
	case corev1.HostPathSocket:
		return hostPathCheck{"a socket file", func(m os.FileMode) bool { return m&os.ModeSocket != 0 }}, true
	case corev1.HostPathCharDev:
		return hostPathCheck{"a character device", func(m os.FileMode) bool {
			return m&os.ModeDevice != 0 && m&os.ModeCharDevice != 0
		}}, true
	case corev1.HostPathBlockDev:
		return hostPathCheck{"a block device", func(m os.FileMode) bool {
			return m&os.ModeDevice != 0 && m&os.ModeCharDevice == 0
		}}, true
	}
	return hostPathCheck{}, false
}

// volumeType names a volume's source as the API spells it ("configMap").
func volumeType(v *corev1.Volume) string {
	src := reflect.ValueOf(v.VolumeSource)
	for i := 0; i < src.NumField(); i++ {
		if f := src.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(src.Type().Field(i).Tag.Get("json"), ",")
			return name
		}
	}
	return "unknown"
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
		host := vol.hostPath
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
			ContainerPath: vm.MountPath, HostPath: host, Readonly: vm.ReadOnly,
			Propagation: propagation(vm.MountPropagation),
		})
	}
	return mounts, nil
}

// subPath returns the host path of sub inside vol, creating it as a
// directory with the volume's mode when it does not exist. It refuses an
// absolute path, "..", and a path that resolves (through symlinks) outside
// the volume.
func subPath(vol podVolume, sub string) (string, error) {
	if filepath.IsAbs(sub) {
		return "", errors.New("must be a relative path")
	}
	for _, part := range strings.Split(filepath.ToSlash(sub), "/") {
		if part == ".." {
			return "", errors.New("must not contain '..'")
		}
	}
	if !vol.dir {
		return "", errors.New("the volume is not a directory")
	}
	root, err := filepath.EvalSymlinks(vol.hostPath)
	if err != nil {
		return "", err
	}
	path := filepath.Join(root, sub)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		info, err := os.Stat(root)
		if err != nil {
			return "", err
		}
		if err := os.MkdirAll(path, info.Mode().Perm()); err != nil {
			return "", err
		}
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	if resolved != root && !strings.HasPrefix(resolved, root+string(filepath.Separator)) {
		return "", fmt.Errorf("resolves to %s, outside the volume", resolved)
	}
	return resolved, nil
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
