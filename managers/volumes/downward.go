package volumes

import (
	"fmt"
	"os"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/internal/downward"
)

// downwardPayload is the files of downwardAPI items: pod fields (labels and
// annotations as key="value" lines sorted by key, downward.FormatMap, the
// same text as the env value) and container resources. Each value is
// written unchanged, as the kubelet's downwardAPI volume plugin writes it.
func (m *VolumeManager) downwardPayload(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, defaultMode int32) (map[string]File, error) {
	files := map[string]File{}
	for _, it := range items {
		mode := defaultMode
		if it.Mode != nil {
			mode = *it.Mode
		}
		var (
			value string
			err   error
		)
		switch {
		case it.FieldRef != nil:
			value, err = podFieldValue(pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			value, err = m.resourceFieldValue(pod, it.ResourceFieldRef)
		default:
			err = fmt.Errorf("downwardAPI item %q has neither fieldRef nor resourceFieldRef", it.Path)
		}
		if err != nil {
			return nil, err
		}
		files[path.Clean(it.Path)] = File{Data: []byte(value), Mode: os.FileMode(mode)}
	}
	return files, nil
}

// podFieldValue is the value of a downward API field path a volume may
// name: the metadata fields (metadata.name, namespace, uid, labels,
// annotations, one label or annotation as metadata.labels['key']), as the
// kubelet's volume plugin reads them; other paths are env-only.
func podFieldValue(pod *corev1.Pod, fieldPath string) (string, error) {
	if !strings.HasPrefix(fieldPath, "metadata.") {
		return "", fmt.Errorf("unsupported fieldPath: %v", fieldPath)
	}
	v, err := downward.FieldValue(pod, fieldPath, downward.Addresses{})
	if err != nil {
		return "", fmt.Errorf("unsupported fieldPath: %v", fieldPath)
	}
	return v, nil
}

// resourceFieldValue is a container's resource limit or request divided by
// the divisor and rounded up. A limit the container does not set is the
// pod-level limit, or else the node's allocatable amount, as the kubelet
// defaults it; without NodeResources that default is unknown, an error.
func (m *VolumeManager) resourceFieldValue(pod *corev1.Pod, fs *corev1.ResourceFieldSelector) (string, error) {
	if m.node == nil {
		return "", fmt.Errorf("resourceFieldRef %s: the node's allocatable resources are unknown", fs.Resource)
	}
	alloc, err := m.node.Allocatable()
	if err != nil {
		return "", fmt.Errorf("node allocatable: %w", err)
	}
	return downward.ResourceValue(fs, pod, nil, alloc)
}
