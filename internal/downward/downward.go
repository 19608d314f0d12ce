package downward

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Addresses are the pod's and the node's IPs, first the primary.
type Addresses struct {
	PodIPs  []string
	HostIPs []string
	// HostIPErr, when HostIPs is empty, says why the node's address is
	// unknown; a status.hostIP(s) reference fails with it.
	HostIPErr error
}

// FieldValue returns the value of a fieldRef path for pod: the metadata
// fields (name, namespace, uid, labels['k'], annotations['k'], and the
// whole labels or annotations as k="v" lines), spec.nodeName,
// spec.serviceAccountName, status.podIP(s) and status.hostIP(s). The
// status fields come from addrs; status.hostIP is an error when no host IP
// is known, as the kubelet fails when it has no node address.
func FieldValue(pod *corev1.Pod, fieldPath string, addrs Addresses) (string, error) {
	if key, ok := subscript(fieldPath, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(fieldPath, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	switch fieldPath {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return FormatMap(pod.Labels), nil
	case "metadata.annotations":
		return FormatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		return first(addrs.PodIPs), nil
	case "status.podIPs":
		return strings.Join(addrs.PodIPs, ","), nil
	case "status.hostIP", "status.hostIPs":
		if len(addrs.HostIPs) == 0 {
			if addrs.HostIPErr != nil {
				return "", fmt.Errorf("%s: %w", fieldPath, addrs.HostIPErr)
			}
			return "", fmt.Errorf("%s: the node has no known IP address (set the node IP)", fieldPath)
		}
		if fieldPath == "status.hostIP" {
			return addrs.HostIPs[0], nil
		}
		return strings.Join(addrs.HostIPs, ","), nil
	}
	return "", fmt.Errorf("unsupported fieldRef path %q", fieldPath)
}

// FormatMap renders labels or annotations as the kubelet does: one
// key="value" line per entry (the value Go-quoted), sorted by key.
func FormatMap(m map[string]string) string {
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
		fmt.Fprintf(&b, "%s=%s", k, strconv.Quote(m[k]))
	}
	return b.String()
}

// subscript parses "<prefix>['key']".
func subscript(fieldPath, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(fieldPath, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// ResourceValue returns the value of a resourceFieldRef: the limit or
// request of cpu, memory, ephemeral-storage or a hugepages size of the
// named container (fs.ContainerName, or c when that is empty), divided by
// fs.Divisor and rounded up. A container without a limit of cpu, memory or
// ephemeral-storage gets the pod-level limit when the pod sets one, else
// the node's allocatable amount, as the kubelet defaults it.
func ResourceValue(fs *corev1.ResourceFieldSelector, pod *corev1.Pod, c *corev1.Container, allocatable corev1.ResourceList) (string, error) {
	target := c
	if fs.ContainerName != "" {
		target = findContainer(pod, fs.ContainerName)
		if target == nil {
			return "", fmt.Errorf("container %s not found", fs.ContainerName)
		}
	}
	if target == nil {
		return "", fmt.Errorf("resourceFieldRef %s: no container named", fs.Resource)
	}
	limits := defaultedLimits(pod, target, allocatable)
	divisor := fs.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	kind, name, ok := strings.Cut(fs.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("unsupported container resource : %v", fs.Resource)
	}
	list := target.Resources.Requests
	if kind == "limits" {
		list = limits
	}
	rn := corev1.ResourceName(name)
	switch {
	case rn == corev1.ResourceCPU:
		q := list[rn]
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	case rn == corev1.ResourceMemory || rn == corev1.ResourceEphemeralStorage || strings.HasPrefix(name, corev1.ResourceHugePagesPrefix):
		q := list[rn]
		return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
	}
	return "", fmt.Errorf("unsupported container resource : %v", fs.Resource)
}

// defaultedLimits returns c's limits with cpu, memory and ephemeral-storage
// filled in, when unset or zero, from the pod-level limits or allocatable.
func defaultedLimits(pod *corev1.Pod, c *corev1.Container, allocatable corev1.ResourceList) corev1.ResourceList {
	out := c.Resources.Limits.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for _, rn := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if q, ok := out[rn]; ok && !q.IsZero() {
			continue
		}
		cap, ok := allocatable[rn]
		if !ok {
			continue
		}
		if pod.Spec.Resources != nil && rn != corev1.ResourceEphemeralStorage {
			if q, ok := pod.Spec.Resources.Limits[rn]; ok && !q.IsZero() {
				cap = q
			}
		}
		out[rn] = cap.DeepCopy()
	}
	return out
}

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
