package volumes

import (
	"os"

	corev1 "k8s.io/api/core/v1"
)

// The permission bits fsGroup ownership adds, as the kubelet's
// SetVolumeOwnership: group read-write on writable volumes, group read on
// read-only ones, group search and setgid on directories.
const (
	rwGroupMask   os.FileMode = 0o660
	roGroupMask   os.FileMode = 0o440
	execGroupMask os.FileMode = 0o110
)

// podFSGroup is the pod's fsGroup, or nil.
func podFSGroup(pod *corev1.Pod) *int64 {
	if sc := pod.Spec.SecurityContext; sc != nil {
		return sc.FSGroup
	}
	return nil
}

// onRootMismatch reports whether the pod asks for fsGroupChangePolicy
// OnRootMismatch.
func onRootMismatch(sc *corev1.PodSecurityContext) bool {
	return sc != nil && sc.FSGroupChangePolicy != nil && *sc.FSGroupChangePolicy == corev1.FSGroupChangeOnRootMismatch
}

// groupMask is the group bits a volume's files get.
func groupMask(readOnly bool) os.FileMode {
	if readOnly {
		return roGroupMask
	}
	return rwGroupMask
}
