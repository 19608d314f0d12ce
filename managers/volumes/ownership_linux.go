//go:build linux

package volumes

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
)

// maxOwnershipDepth bounds how deep the ownership walk descends: it holds
// one open descriptor per level.
const maxOwnershipDepth = 256

// setOwnership gives every file and directory of the volume at dir the
// group fsGroup and the group permission bits the kubelet gives them
// (directories also setgid, so new files inherit the group). With
// fsGroupChangePolicy OnRootMismatch it does nothing when the root already
// has the group and the bits. A nil fsGroup does nothing.
//
// The walk never leaves the volume: it goes by descriptors from the root's,
// each entry opened with O_PATH|O_NOFOLLOW relative to its directory's, and
// changes the inode it opened (fchown, and chmod through /proc/self/fd), so
// that an entry swapped for a symlink meanwhile is at worst the symlink
// itself. A symlink gets the group but no mode (lchown); a directory on
// another file system (a mount inside the volume) is left alone; an entry
// that vanished meanwhile is skipped. It is not safe against a directory
// tree deeper than maxOwnershipDepth, which is an error.
func setOwnership(dir string, fsGroup *int64, sc *corev1.PodSecurityContext, readOnly bool) error {
	if fsGroup == nil {
		return nil
	}
	root, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open volume %s: %w", dir, err)
	}
	defer unix.Close(root)
	var st unix.Stat_t
	if err := unix.Fstat(root, &st); err != nil {
		return fmt.Errorf("stat volume %s: %w", dir, err)
	}
	w := ownershipWalk{root: dir, gid: int(*fsGroup), mask: uint32(groupMask(readOnly)), dev: st.Dev}
	if onRootMismatch(sc) && !w.needsChange(&st) {
		return nil
	}
	return w.directory(root, &st, ".", 0)
}

// ownershipWalk is one walk of a volume.
type ownershipWalk struct {
	root string // the volume, for errors
	gid  int
	mask uint32 // the group bits of every file
	dev  uint64 // the volume's file system
}

// needsChange reports whether the volume's root lacks the group or the
// bits, the test of fsGroupChangePolicy OnRootMismatch.
func (w *ownershipWalk) needsChange(st *unix.Stat_t) bool {
	want := w.mask | unix.S_ISGID | uint32(execGroupMask)
	return int(st.Gid) != w.gid || st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Mode&want != want
}

// directory changes the directory open at fd (rel in the volume), then
// every entry in it.
func (w *ownershipWalk) directory(fd int, st *unix.Stat_t, rel string, depth int) error {
	if err := unix.Fchown(fd, -1, w.gid); err != nil {
		return w.errorf(rel, "chown", err)
	}
	if mode, change := w.mode(st, true); change {
		if err := unix.Fchmod(fd, mode); err != nil {
			return w.errorf(rel, "chmod", err)
		}
	}
	names, err := readNames(fd)
	if err != nil {
		return w.errorf(rel, "read", err)
	}
	for _, name := range names {
		if err := w.entry(fd, name, filepath.Join(rel, name), depth); err != nil {
			return err
		}
	}
	return nil
}

// entry changes the entry name of the directory open at dirfd.
func (w *ownershipWalk) entry(dirfd int, name, rel string, depth int) error {
	fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return w.errorf(rel, "open", err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return w.errorf(rel, "stat", err)
	}
	if st.Dev != w.dev {
		return nil
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		// The link itself; its target is not the volume's.
		if err := unix.Fchownat(fd, "", -1, w.gid, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return w.errorf(rel, "chown", err)
		}
		return nil
	case unix.S_IFDIR:
		if depth+1 > maxOwnershipDepth {
			return fmt.Errorf("apply fsGroup to volume %s: %s is nested deeper than %d directories", w.root, rel, maxOwnershipDepth)
		}
		// "." of the descriptor is the directory it holds.
		dfd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return w.errorf(rel, "open", err)
		}
		defer unix.Close(dfd)
		return w.directory(dfd, &st, rel, depth+1)
	}
	if err := unix.Fchownat(fd, "", -1, w.gid, unix.AT_EMPTY_PATH); err != nil {
		return w.errorf(rel, "chown", err)
	}
	if mode, change := w.mode(&st, false); change {
		// An O_PATH descriptor takes no fchmod; its /proc/self/fd link
		// reaches the very inode it holds.
		if err := unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), mode); err != nil {
			return w.errorf(rel, "chmod", err)
		}
	}
	return nil
}

// mode is the permission bits st should have, and whether they change.
func (w *ownershipWalk) mode(st *unix.Stat_t, dir bool) (uint32, bool) {
	cur := st.Mode & 0o7777
	want := w.mask
	if dir {
		want |= unix.S_ISGID | uint32(execGroupMask)
	}
	return cur | want, cur|want != cur
}

func (w *ownershipWalk) errorf(rel, op string, err error) error {
	return fmt.Errorf("apply fsGroup to volume %s: %s %s: %w", w.root, op, rel, err)
}

// readNames lists the directory open at fd ("." and ".." left out).
func readNames(fd int) ([]string, error) {
	var names []string
	buf := make([]byte, 8192)
	for {
		n, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}
