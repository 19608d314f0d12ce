package cri

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Limits of what sandboxAnnotations copies from a pod's annotations to its
// sandbox. The runtime keeps a sandbox's annotations and sends them back in
// every ListPodSandbox answer, which gRPC caps at 16 MiB: 80 pods of
// 250,000-byte annotations (each within the API's 256 KiB) overflow it.
const (
	// MaxSandboxAnnotationValue is the longest annotation value, in bytes,
	// copied to a sandbox; a longer one is left out.
	MaxSandboxAnnotationValue = 8 << 10
	// MaxSandboxAnnotationsSize is the most bytes (keys plus values) of
	// annotations copied to one sandbox: 110 pods take at most 3.5 MiB of a
	// listing.
	MaxSandboxAnnotationsSize = 32 << 10
)

// lastAppliedAnnotation is kubectl's copy of the whole object it applied;
// no runtime or CNI plugin reads it, and it is often the largest.
const lastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// sandboxAnnotations are the pod's annotations the runtime may read (a
// runtime class's settings, CNI plugins' options such as the bandwidth
// limits, containerd's pod_annotations pass-through): every one except
// kubectl's last-applied configuration and values longer than
// MaxSandboxAnnotationValue, the smallest first (ties by key) while their
// total stays within MaxSandboxAnnotationsSize. The kubelet copies them all.
// The result never aliases pod's map; it is nil for a pod without
// annotations.
func sandboxAnnotations(pod *corev1.Pod) map[string]string {
	if len(pod.Annotations) == 0 {
		return nil
	}
	keys := make([]string, 0, len(pod.Annotations))
	for k, v := range pod.Annotations {
		if k != lastAppliedAnnotation && len(v) <= MaxSandboxAnnotationValue {
			keys = append(keys, k)
		}
	}
	size := func(k string) int { return len(k) + len(pod.Annotations[k]) }
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(size(a), size(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	out := make(map[string]string, len(keys))
	total := 0
	for _, k := range keys {
		if total+size(k) > MaxSandboxAnnotationsSize {
			break
		}
		total += size(k)
		out[k] = pod.Annotations[k]
	}
	return out
}

// droppedAnnotations lists, sorted, the keys of the pod's annotations that
// kept (sandboxAnnotations' answer) left out.
func droppedAnnotations(pod *corev1.Pod, kept map[string]string) []string {
	var out []string
	for k := range pod.Annotations {
		if _, ok := kept[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
