package cri

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// sandboxLabels are the pod's labels plus the pod's identity and the
// manager's instance tag; the identity labels win over pod labels of the same
// key.
func (m *Manager) sandboxLabels(pod *corev1.Pod) map[string]string {
	l := make(map[string]string, len(pod.Labels)+4)
	maps.Copy(l, pod.Labels)
	l[noderuntime.LabelPodName] = pod.Name
	l[noderuntime.LabelPodNamespace] = pod.Namespace
	l[noderuntime.LabelPodUID] = string(pod.UID)
	l[noderuntime.LabelInstance] = m.cfg.InstanceID
	return l
}

// containerLabels identify a container: its pod, its name and the instance.
func (m *Manager) containerLabels(pod *corev1.Pod, c *corev1.Container) map[string]string {
	return map[string]string{
		noderuntime.LabelPodName:       pod.Name,
		noderuntime.LabelPodNamespace:  pod.Namespace,
		noderuntime.LabelPodUID:        string(pod.UID),
		noderuntime.LabelContainerName: c.Name,
		noderuntime.LabelInstance:      m.cfg.InstanceID,
	}
}

// containerAnnotations carry what GetPodStatus and an orphan KillPod need to
// rebuild a container's state without the pod spec.
func containerAnnotations(pod *corev1.Pod, c *corev1.Container, restartCount int) (map[string]string, error) {
	a := map[string]string{
		noderuntime.AnnotationContainerHash:            strconv.FormatUint(hashContainer(c), 16),
		noderuntime.AnnotationContainerRestartCount:    strconv.Itoa(restartCount),
		noderuntime.AnnotationTerminationMessagePath:   c.TerminationMessagePath,
		noderuntime.AnnotationTerminationMessagePolicy: string(c.TerminationMessagePolicy),
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		a[noderuntime.AnnotationTerminationGracePeriod] = strconv.FormatInt(*g, 10)
	}
	if g := pod.DeletionGracePeriodSeconds; g != nil {
		a[noderuntime.AnnotationPodDeletionGracePeriod] = strconv.FormatInt(*g, 10)
	}
	if len(c.Ports) > 0 {
		ports, err := json.Marshal(c.Ports)
		if err != nil {
			return nil, fmt.Errorf("encode ports of container %q: %w", c.Name, err)
		}
		a[noderuntime.AnnotationContainerPorts] = string(ports)
	}
	return a, nil
}

// hashContainer is the container's spec hash: FNV-64a over the JSON encoding
// of the container with its resources and resize policy cleared, so that an
// in-place resize never counts as a spec change. encoding/json writes struct
// fields in declaration order and map keys sorted, so the hash is stable.
func hashContainer(c *corev1.Container) uint64 {
	cp := c.DeepCopy()
	cp.Resources = corev1.ResourceRequirements{}
	cp.ResizePolicy = nil
	b, err := json.Marshal(cp)
	if err != nil {
		// A corev1.Container always encodes; fall back to the name and image.
		b = []byte(c.Name + "\x00" + c.Image)
	}
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

// parseHash reads the hash annotation; 0 when absent or malformed.
func parseHash(annotations map[string]string) uint64 {
	h, err := strconv.ParseUint(annotations[noderuntime.AnnotationContainerHash], 16, 64)
	if err != nil {
		return 0
	}
	return h
}

// parseRestartCount reads the restart-count annotation; 0 when absent.
func parseRestartCount(annotations map[string]string) int {
	n, err := strconv.Atoi(annotations[noderuntime.AnnotationContainerRestartCount])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// parseSeconds reads an int64 seconds annotation.
func parseSeconds(annotations map[string]string, key string) (int64, bool) {
	v, ok := annotations[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// podUIDOf returns the pod UID label.
func podUIDOf(labels map[string]string) types.UID {
	return types.UID(labels[noderuntime.LabelPodUID])
}

// podFullName formats a pod as the kubelet does in messages: name_ns(uid).
func podFullName(name, namespace string, uid types.UID) string {
	return fmt.Sprintf("%s_%s(%s)", name, namespace, uid)
}

// formatPod is podFullName for a pod object.
func formatPod(pod *corev1.Pod) string {
	return podFullName(pod.Name, pod.Namespace, pod.UID)
}
