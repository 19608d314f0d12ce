package volumes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// The kubelet's plugin directory names (kubernetes.io/<plugin>, escaped).
const (
	pluginEmptyDir    = "kubernetes.io~empty-dir"
	pluginConfigMap   = "kubernetes.io~configmap"
	pluginSecret      = "kubernetes.io~secret"
	pluginDownwardAPI = "kubernetes.io~downward-api"
	pluginProjected   = "kubernetes.io~projected"
)

// defaultFileMode is what the API server defaults defaultMode to.
const defaultFileMode int32 = 0o644

// refreshable reports whether a volume's content follows API objects or
// the pod, so that it is written again on every set-up.
func refreshable(v *corev1.Volume) bool {
	return v.ConfigMap != nil || v.Secret != nil || v.DownwardAPI != nil || v.Projected != nil
}

// setUpVolume sets up (or refreshes, when done) one volume of the pod.
func (m *VolumeManager) setUpVolume(ctx context.Context, pod *corev1.Pod, v *corev1.Volume, done bool) (noderuntime.Volume, error) {
	switch {
	case v.EmptyDir != nil:
		return m.setUpEmptyDir(pod, v.Name, v.EmptyDir)
	case v.HostPath != nil:
		return setUpHostPath(v.HostPath)
	case v.ConfigMap != nil:
		return m.setUpAtomic(pod, v.Name, pluginConfigMap, false, done, func() (map[string]File, error) {
			return m.configMapPayload(ctx, source{pod, v.Name}, v.ConfigMap)
		})
	case v.Secret != nil:
		return m.setUpAtomic(pod, v.Name, pluginSecret, true, done, func() (map[string]File, error) {
			return m.secretPayload(ctx, source{pod, v.Name}, v.Secret)
		})
	case v.DownwardAPI != nil:
		return m.setUpAtomic(pod, v.Name, pluginDownwardAPI, true, done, func() (map[string]File, error) {
			return m.downwardPayload(pod, v.DownwardAPI.Items, modeOr(v.DownwardAPI.DefaultMode))
		})
	case v.Projected != nil:
		return m.setUpAtomic(pod, v.Name, pluginProjected, true, done, func() (map[string]File, error) {
			return m.projectedPayload(ctx, source{pod, v.Name}, v.Projected)
		})
	}
	return noderuntime.Volume{}, fmt.Errorf("volume type %s is not supported by nodekit", volumeType(v))
}

// reconstruct finds an API-backed volume a previous run of the agent
// wrote, as the kubelet reconstructs volumes from disk after a restart: a
// volume directory with a ..data symlink.
func (m *VolumeManager) reconstruct(pod *corev1.Pod, v *corev1.Volume) (noderuntime.Volume, bool) {
	var plugin string
	switch {
	case v.ConfigMap != nil:
		plugin = pluginConfigMap
	case v.Secret != nil:
		plugin = pluginSecret
	case v.DownwardAPI != nil:
		plugin = pluginDownwardAPI
	case v.Projected != nil:
		plugin = pluginProjected
	default:
		return noderuntime.Volume{}, false
	}
	dir := m.volumeDir(pod.UID, plugin, v.Name)
	if info, err := os.Lstat(filepath.Join(dir, dataDirName)); err != nil || info.Mode()&os.ModeSymlink == 0 {
		return noderuntime.Volume{}, false
	}
	return noderuntime.Volume{HostPath: dir, Dir: true, ReadOnly: true}, true
}

// setUpAtomic writes the payload of an API-backed volume the atomic way,
// on a tmpfs when inMemory (secret, downwardAPI and projected volumes, as
// the kubelet backs them), and applies the pod's fsGroup. The payload is
// computed first, so that a volume that cannot be made leaves nothing. A
// refresh (done) of a volume whose tmpfs is still mounted checks that with
// a stat, not the mount table, and does not size it again.
func (m *VolumeManager) setUpAtomic(pod *corev1.Pod, name, plugin string, inMemory, done bool, payload func() (map[string]File, error)) (noderuntime.Volume, error) {
	files, err := payload()
	if err != nil {
		return noderuntime.Volume{}, err
	}
	fsGroup := podFSGroup(pod)
	if fsGroup != nil {
		for p, f := range files {
			f.Mode |= roGroupMask
			files[p] = f
		}
	}
	dir := m.volumeDir(pod.UID, plugin, name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return noderuntime.Volume{}, err
	}
	if inMemory && !m.cfg.DiskOnly && !(done && m.tmpfsMounted(dir)) {
		if err := m.tmpfs(dir, m.memoryBackedSize(pod, nil)); err != nil {
			return noderuntime.Volume{}, fmt.Errorf("mount tmpfs: %w", err)
		}
	}
	// Like the emptyDir the kubelet wraps these volumes in, the root is
	// open to every user, so that a non-root container can read the files
	// their modes allow.
	if err := chmodKeepingSetgid(dir, 0o777); err != nil {
		return noderuntime.Volume{}, err
	}
	wrote, err := writeAtomic(dir, files, m.now())
	if err != nil {
		return noderuntime.Volume{}, fmt.Errorf("write %s: %w", name, err)
	}
	if wrote {
		m.log.V(4).Info("volume files written", "pod", pod.Namespace+"/"+pod.Name, "volume", name)
		if err := setOwnership(dir, fsGroup, pod.Spec.SecurityContext, true); err != nil {
			return noderuntime.Volume{}, fmt.Errorf("apply fsGroup: %w", err)
		}
	}
	return noderuntime.Volume{HostPath: dir, Dir: true, ReadOnly: true}, nil
}

// chmodKeepingSetgid sets dir's permission bits, keeping the setgid bit
// fsGroup ownership gave it.
func chmodKeepingSetgid(dir string, perm os.FileMode) error {
	info, err := os.Stat(dir)
	if err != nil {
		return err
	}
	want := perm | info.Mode()&os.ModeSetgid
	if info.Mode()&(os.ModePerm|os.ModeSetgid) == want {
		return nil
	}
	return os.Chmod(dir, want)
}

// setUpEmptyDir creates an emptyDir volume, world-writable as the kubelet
// makes it, on a tmpfs for medium Memory (its size is the smaller of
// sizeLimit and the pod's memory limit or the node's allocatable memory),
// owned by the pod's fsGroup. sizeLimit on disk is left to eviction, which
// nodekit does not do yet. As the kubelet's, a volume whose set-up
// completed (its ready marker) is found again as it is, after an agent
// restart too: the fsGroup is applied once, before any container runs,
// never over the files of running containers.
func (m *VolumeManager) setUpEmptyDir(pod *corev1.Pod, name string, src *corev1.EmptyDirVolumeSource) (noderuntime.Volume, error) {
	dir := m.volumeDir(pod.UID, pluginEmptyDir, name)
	memory := src.Medium == corev1.StorageMediumMemory && !m.cfg.DiskOnly
	if m.isReady(pod.UID, pluginEmptyDir, name, dir, memory) {
		return noderuntime.Volume{HostPath: dir, Dir: true}, nil
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return noderuntime.Volume{}, err
	}
	mode := os.FileMode(0o777)
	switch src.Medium {
	case corev1.StorageMediumDefault:
	case corev1.StorageMediumMemory:
		if m.cfg.DiskOnly {
			break
		}
		if err := m.tmpfs(dir, m.memoryBackedSize(pod, src.SizeLimit)); err != nil {
			return noderuntime.Volume{}, fmt.Errorf("mount tmpfs: %w", err)
		}
		// The kubelet mounts the tmpfs on its 0777 directory and leaves
		// the tmpfs root as the kernel makes it: 1777 (sticky).
		mode |= os.ModeSticky
	default:
		return noderuntime.Volume{}, fmt.Errorf("emptyDir medium %q is not supported by nodekit", src.Medium)
	}
	if err := os.Chmod(dir, mode); err != nil {
		return noderuntime.Volume{}, err
	}
	if err := setOwnership(dir, podFSGroup(pod), pod.Spec.SecurityContext, false); err != nil {
		return noderuntime.Volume{}, fmt.Errorf("apply fsGroup: %w", err)
	}
	if err := m.setReady(pod.UID, pluginEmptyDir, name); err != nil {
		return noderuntime.Volume{}, err
	}
	return noderuntime.Volume{HostPath: dir, Dir: true}, nil
}

// memoryBackedSize is the size of a tmpfs volume: sizeLimit when set,
// capped by the pod's memory limit (the sum of its containers' when every
// one sets one, or its pod-level limit), else by the node's allocatable
// memory; 0 (the kernel's default) when none is known.
func (m *VolumeManager) memoryBackedSize(pod *corev1.Pod, sizeLimit *resource.Quantity) int64 {
	var limit int64
	if q, ok := podMemoryLimit(pod); ok {
		limit = q
	} else if m.node != nil {
		if alloc, err := m.node.Allocatable(); err == nil {
			if q, ok := alloc[corev1.ResourceMemory]; ok {
				limit = q.Value()
			}
		}
	}
	if sizeLimit != nil && sizeLimit.Value() > 0 && (limit == 0 || sizeLimit.Value() < limit) {
		return sizeLimit.Value()
	}
	return limit
}

// podMemoryLimit is the pod-level memory limit, or the sum of the regular
// containers' limits when every one has one.
func podMemoryLimit(pod *corev1.Pod) (int64, bool) {
	if r := pod.Spec.Resources; r != nil {
		if q, ok := r.Limits[corev1.ResourceMemory]; ok {
			return q.Value(), true
		}
	}
	var sum int64
	for i := range pod.Spec.Containers {
		q, ok := pod.Spec.Containers[i].Resources.Limits[corev1.ResourceMemory]
		if !ok {
			return 0, false
		}
		sum += q.Value()
	}
	return sum, len(pod.Spec.Containers) > 0
}

// setUpHostPath checks a hostPath volume against its type, creating what
// DirectoryOrCreate and FileOrCreate ask for.
func setUpHostPath(src *corev1.HostPathVolumeSource) (noderuntime.Volume, error) {
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
				return noderuntime.Volume{}, err
			}
			info, statErr = os.Stat(path)
		}
	case corev1.HostPathFileOrCreate:
		if errors.Is(statErr, os.ErrNotExist) {
			// Like the kubelet, the parent directory is not created.
			f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o644)
			if err != nil {
				return noderuntime.Volume{}, err
			}
			_ = f.Close()
			info, statErr = os.Stat(path)
		}
	}
	want, ok := hostPathCheckFor(typ)
	if !ok {
		return noderuntime.Volume{}, fmt.Errorf("hostPath type %q is not supported", typ)
	}
	if want.what != "" && (statErr != nil || !want.is(info.Mode())) {
		return noderuntime.Volume{}, fmt.Errorf("hostPath type check failed: %s is not %s", path, want.what)
	}
	return noderuntime.Volume{HostPath: path, Dir: statErr == nil && info.IsDir()}, nil
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

// modeOr returns *mode, or the API's default file mode.
func modeOr(mode *int32) int32 {
	if mode == nil {
		return defaultFileMode
	}
	return *mode
}
