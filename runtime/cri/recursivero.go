package cri

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// recursiveReadOnly decides, with the kubelet's rules, whether a
// volumeMount is mounted recursively read-only, given whether the pod's
// runtime handler supports it. Disabled (or unset) is never; IfPossible is
// when the runtime supports it; Enabled is always, and an error when the
// runtime does not support it. Either asks for a readOnly mount without
// mount propagation.
func recursiveReadOnly(vm corev1.VolumeMount, supported bool) (bool, error) {
	if vm.RecursiveReadOnly == nil || *vm.RecursiveReadOnly == corev1.RecursiveReadOnlyDisabled {
		return false, nil
	}
	if !vm.ReadOnly {
		return false, errors.New("recursiveReadOnly needs readOnly: true")
	}
	if vm.MountPropagation != nil && *vm.MountPropagation != corev1.MountPropagationNone {
		return false, fmt.Errorf("recursiveReadOnly does not go with mountPropagation %s", *vm.MountPropagation)
	}
	switch *vm.RecursiveReadOnly {
	case corev1.RecursiveReadOnlyIfPossible:
		return supported, nil
	case corev1.RecursiveReadOnlyEnabled:
		if !supported {
			return false, errors.New("recursiveReadOnly is Enabled, but the runtime handler does not support recursive read-only mounts")
		}
		return true, nil
	}
	return false, fmt.Errorf("unknown recursiveReadOnly mode %q", *vm.RecursiveReadOnly)
}

// podSupportsRecursiveReadOnly reports whether the runtime handler of the
// pod supports recursive read-only mounts, as the runtime's status reports
// its handlers' features. It asks the runtime only when a volumeMount of
// the pod asks for one; a handler the runtime does not list, or a status
// that cannot be read, is no support (logged), as in the kubelet.
func (m *Manager) podSupportsRecursiveReadOnly(ctx context.Context, pod *corev1.Pod) bool {
	if !wantsRecursiveReadOnly(pod) {
		return false
	}
	handler, err := m.runtimeHandler(ctx, pod)
	if err != nil {
		m.log.Error(err, "cannot resolve the runtime handler for recursive read-only mounts", "pod", formatPod(pod))
		return false
	}
	resp, err := m.rs.Status(ctx, false)
	if err != nil {
		m.log.Error(err, "cannot read the runtime status for recursive read-only mounts", "pod", formatPod(pod))
		return false
	}
	for _, h := range resp.GetRuntimeHandlers() {
		if h.GetName() == handler {
			return h.GetFeatures().GetRecursiveReadOnlyMounts()
		}
	}
	if len(resp.GetRuntimeHandlers()) > 0 {
		m.log.Error(nil, "runtime handler not reported by the runtime", "pod", formatPod(pod), "runtimeHandler", handler)
	}
	return false
}

// wantsRecursiveReadOnly reports whether a volumeMount of any container of
// the pod asks for a recursive read-only mount.
func wantsRecursiveReadOnly(pod *corev1.Pod) bool {
	want := func(mounts []corev1.VolumeMount) bool {
		for _, vm := range mounts {
			if vm.RecursiveReadOnly != nil && *vm.RecursiveReadOnly != corev1.RecursiveReadOnlyDisabled {
				return true
			}
		}
		return false
	}
	for i := range pod.Spec.InitContainers {
		if want(pod.Spec.InitContainers[i].VolumeMounts) {
			return true
		}
	}
	for i := range pod.Spec.Containers {
		if want(pod.Spec.Containers[i].VolumeMounts) {
			return true
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if want(pod.Spec.EphemeralContainers[i].VolumeMounts) {
			return true
		}
	}
	return false
}
