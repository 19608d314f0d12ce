package volumes

import (
	"os"
	"path/filepath"
	"syscall"

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

// setOwnership gives every file and directory under dir the group fsGroup
// and the group permission bits the kubelet gives them (directories also
// setgid, so new files inherit the group). With fsGroupChangePolicy
// OnRootMismatch it does nothing when dir already has the group and the
// bits. Symlinks get the group but no mode change. A nil fsGroup does
// nothing.
func setOwnership(dir string, fsGroup *int64, sc *corev1.PodSecurityContext, readOnly bool) error {
	if fsGroup == nil {
		return nil
	}
	gid := int(*fsGroup)
	mask := rwGroupMask
	if readOnly {
		mask = roGroupMask
	}
	if sc != nil && sc.FSGroupChangePolicy != nil && *sc.FSGroupChangePolicy == corev1.FSGroupChangeOnRootMismatch &&
		!needsOwnershipChange(dir, gid, mask) {
		return nil
	}
	return filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, -1, gid); err != nil {
			return err
		}
		if info.Mode()&os.ModeSymlink != 0 {
			return nil
		}
		want := mask
		if info.IsDir() {
			want |= os.ModeSetgid | execGroupMask
		}
		mode := info.Mode() & (os.ModePerm | os.ModeSetgid | os.ModeSetuid | os.ModeSticky)
		if mode|want == mode {
			return nil
		}
		return os.Chmod(p, mode|want)
	})
}

// needsOwnershipChange reports whether the volume's root lacks the group or
// the bits, the test of fsGroupChangePolicy OnRootMismatch.
func needsOwnershipChange(dir string, gid int, mask os.FileMode) bool {
	info, err := os.Stat(dir)
	if err != nil {
		return true
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int(st.Gid) != gid {
		return true
	}
	want := mask | os.ModeSetgid | execGroupMask
	mode := info.Mode() & (os.ModePerm | os.ModeSetgid)
	return mode&want != want
}
