package volumes

import (
	"fmt"
	"math"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// downwardPayload is the files of downwardAPI items: pod fields (labels and
// annotations as sorted key="value" lines) and container resources.
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
		files[path.Clean(it.Path)] = File{Data: []byte(sortLines(value)), Mode: os.FileMode(mode)}
	}
	return files, nil
}

// sortLines sorts the lines of a labels or annotations value.
func sortLines(s string) string {
	lines := strings.Split(s, "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// podFieldValue is the value of a downward API field path a volume may
// name: metadata.name, namespace, uid, labels, annotations, and one label
// or annotation as metadata.labels['key'].
func podFieldValue(pod *corev1.Pod, fieldPath string) (string, error) {
	if p, key, ok := splitSubscript(fieldPath); ok {
		switch p {
		case "metadata.labels":
			return pod.Labels[key], nil
		case "metadata.annotations":
			return pod.Annotations[key], nil
		}
		return "", fmt.Errorf("unsupported fieldPath: %v", fieldPath)
	}
	switch fieldPath {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %v", fieldPath)
}

// splitSubscript splits "metadata.labels['key']" into its path and key.
func splitSubscript(fieldPath string) (string, string, bool) {
	if !strings.HasSuffix(fieldPath, "']") {
		return "", "", false
	}
	p, key, ok := strings.Cut(strings.TrimSuffix(fieldPath, "']"), "['")
	if !ok {
		return "", "", false
	}
	return p, key, true
}

// formatMap writes a map as key="value" lines in key order, the value
// quoted as Go quotes it, without a final newline.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s=%q", k, m[k])
	}
	return b.String()
}

// resourceFieldValue is a container's resource limit or request divided by
// the divisor and rounded up. A limit the container does not set is the
// pod-level limit, or else the node's allocatable amount, as the kubelet
// defaults it.
func (m *VolumeManager) resourceFieldValue(pod *corev1.Pod, fs *corev1.ResourceFieldSelector) (string, error) {
	c := findContainer(pod, fs.ContainerName)
	if c == nil {
		return "", fmt.Errorf("container %q not found in pod", fs.ContainerName)
	}
	divisor := fs.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	kind, name, ok := strings.Cut(fs.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("unsupported container resource : %v", fs.Resource)
	}
	res := corev1.ResourceName(name)
	var q resource.Quantity
	if kind == "requests" {
		q = c.Resources.Requests[res]
	} else {
		var err error
		if q, err = m.limitOf(pod, c, res); err != nil {
			return "", err
		}
	}
	switch {
	case res == corev1.ResourceCPU:
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	case res == corev1.ResourceMemory || res == corev1.ResourceEphemeralStorage || strings.HasPrefix(name, corev1.ResourceHugePagesPrefix):
		return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
	}
	return "", fmt.Errorf("unsupported container resource : %v", fs.Resource)
}

// limitOf is the container's limit of res, defaulted as the kubelet does.
func (m *VolumeManager) limitOf(pod *corev1.Pod, c *corev1.Container, res corev1.ResourceName) (resource.Quantity, error) {
	if q, ok := c.Resources.Limits[res]; ok {
		return q, nil
	}
	if r := pod.Spec.Resources; r != nil {
		if q, ok := r.Limits[res]; ok {
			return q, nil
		}
	}
	if res != corev1.ResourceCPU && res != corev1.ResourceMemory && res != corev1.ResourceEphemeralStorage {
		return resource.Quantity{}, nil
	}
	if m.node == nil {
		return resource.Quantity{}, fmt.Errorf("limits.%s of container %q is not set and the node's allocatable resources are unknown", res, c.Name)
	}
	alloc, err := m.node.Allocatable()
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("node allocatable: %w", err)
	}
	return alloc[res], nil
}

// findContainer finds a regular or init container by name.
func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}
