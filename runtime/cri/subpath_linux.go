//go:build linux

package cri

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/nodekit/nodekit/internal/mount"
)

// maxSubPathLinks is how many symlinks a subPath may pass through, as the
// kernel's limit for one path.
const maxSubPathLinks = 40

// bindSubPath makes sub, inside the volume whose symlink-free root is
// root, the source of a container's mount, without a window in which a
// container sharing the volume can redirect it: it opens sub component by
// component from the root's file descriptor, following no symlink in the
// kernel (each one is read and checked to stay inside the volume), creates
// the missing directories there with mode, and bind-mounts the opened
// file through /proc/<pid>/fd onto target, a path of the pod's directory
// that no container can reach, for the runtime to mount. A target that
// already holds the same file is kept.
func bindSubPath(root, sub string, mode os.FileMode, target string) error {
	fd, err := openSubPath(root, sub, mode)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var src unix.Stat_t
	if err := unix.Fstat(fd, &src); err != nil {
		return fmt.Errorf("stat the opened subPath: %w", err)
	}
	var cur unix.Stat_t
	if err := unix.Stat(target, &cur); err == nil && cur.Dev == src.Dev && cur.Ino == src.Ino {
		return nil // mounted by an earlier start of the container
	}
	if err := mount.UnmountAll(target); err != nil {
		return err
	}
	if err := prepareSubPathTarget(target, src.Mode&unix.S_IFMT == unix.S_IFDIR); err != nil {
		return err
	}
	source := "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/" + strconv.Itoa(fd)
	if err := unix.Mount(source, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mount the subPath on %s: %w", target, err)
	}
	return nil
}

// prepareSubPathTarget makes target an empty directory or an empty file,
// as dir says, replacing one of the other kind.
func prepareSubPathTarget(target string, dir bool) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return fmt.Errorf("subPath mount directory: %w", err)
	}
	if st, err := os.Lstat(target); err == nil {
		if st.IsDir() == dir && (dir || st.Mode().IsRegular()) {
			return nil
		}
		if err := os.Remove(target); err != nil {
			return fmt.Errorf("replace subPath mount target: %w", err)
		}
	}
	if dir {
		if err := os.Mkdir(target, 0o750); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("subPath mount target: %w", err)
		}
		return nil
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|unix.O_NOFOLLOW, 0o640)
	if err != nil {
		return fmt.Errorf("subPath mount target: %w", err)
	}
	return f.Close()
}

// openSubPath returns an O_PATH descriptor of sub below root, reached from
// root's descriptor by openat without following any symlink. A symlink on
// the way is read and its target walked again from root, after a check
// that it stays inside the volume. A missing directory is created by
// mkdirat in its parent's descriptor, opened without following symlinks,
// and given mode (setgid and sticky bits included) by fchmod on that
// descriptor: nothing is ever changed by path.
func openSubPath(root, sub string, mode os.FileMode) (int, error) {
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open the volume: %w", err)
	}
	defer unix.Close(rootFD)
	w := &subPathWalk{root: root, rootFD: rootFD, mode: mode, fd: -1}
	defer w.closeFD()
	if err := w.restart(); err != nil {
		return -1, err
	}
	remaining := splitSubPath(sub)
	for len(remaining) > 0 {
		part := remaining[0]
		remaining = remaining[1:]
		next, err := w.step(part, len(remaining) == 0)
		if err != nil {
			return -1, err
		}
		remaining = append(next, remaining...)
	}
	fd := w.fd
	w.fd = -1
	return fd, nil
}

// subPathWalk is the state of openSubPath: the descriptor reached so far
// and its path relative to the volume's root.
type subPathWalk struct {
	root   string
	rootFD int
	mode   os.FileMode
	fd     int
	rel    string
	links  int
}

func (w *subPathWalk) closeFD() {
	if w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
}

// restart goes back to the volume's root.
func (w *subPathWalk) restart() error {
	w.closeFD()
	fd, err := unix.FcntlInt(uintptr(w.rootFD), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("duplicate the volume's descriptor: %w", err)
	}
	w.fd, w.rel = fd, ""
	return nil
}

// step walks to part of the current directory, creating it when missing.
// When part is a symlink it returns the components of its target (from
// the volume's root) that are still to walk.
func (w *subPathWalk) step(part string, last bool) ([]string, error) {
	child, err := unix.Openat(w.fd, part, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		child, err = w.mkdir(part)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Join(w.rel, part), err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(child, &st); err != nil {
		unix.Close(child)
		return nil, fmt.Errorf("stat %s: %w", filepath.Join(w.rel, part), err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		defer unix.Close(child)
		return w.follow(child, part)
	case unix.S_IFDIR:
	default:
		if !last {
			unix.Close(child)
			return nil, fmt.Errorf("%s: %w", filepath.Join(w.rel, part), unix.ENOTDIR)
		}
	}
	w.closeFD()
	w.fd, w.rel = child, filepath.Join(w.rel, part)
	return nil, nil
}

// mkdir creates directory part in the current directory with the volume
// root's mode and returns a descriptor of it. A directory that another
// process made first is opened as it is, its mode left alone.
func (w *subPathWalk) mkdir(part string) (int, error) {
	err := unix.Mkdirat(w.fd, part, uint32(w.mode.Perm()))
	if errors.Is(err, unix.EEXIST) {
		return unix.Openat(w.fd, part, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return -1, err
	}
	fd, err := unix.Openat(w.fd, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	// The umask trimmed the mode mkdirat set, which never has the
	// setgid and sticky bits.
	if err := unix.Fchmod(fd, unixMode(w.mode)); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("chmod: %w", err)
	}
	return fd, nil
}

// follow reads symlink part of the current directory, opened as link, and
// returns the components, from the volume's root, of where it points,
// refusing a target outside the volume.
func (w *subPathWalk) follow(link int, part string) ([]string, error) {
	w.links++
	if w.links > maxSubPathLinks {
		return nil, fmt.Errorf("%s: %w", filepath.Join(w.rel, part), unix.ELOOP)
	}
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(link, "", buf) // the symlink opened, whatever is at part now
	if err != nil {
		return nil, fmt.Errorf("read symlink %s: %w", filepath.Join(w.rel, part), err)
	}
	target := string(buf[:n])
	var rel string
	if filepath.IsAbs(target) {
		rel, err = filepath.Rel(w.root, filepath.Clean(target))
		if err != nil {
			return nil, fmt.Errorf("symlink %s: %w", filepath.Join(w.rel, part), err)
		}
	} else {
		rel = filepath.Join(w.rel, target)
	}
	rel = filepath.Clean(rel)
	if rel == ".." || len(rel) > 2 && rel[:3] == "../" {
		return nil, fmt.Errorf("resolves to %s, outside the volume", filepath.Join(w.root, rel))
	}
	if err := w.restart(); err != nil {
		return nil, err
	}
	return splitSubPath(rel), nil
}

// unixMode is mode as chmod takes it, setuid, setgid and sticky bits
// included.
func unixMode(mode os.FileMode) uint32 {
	m := uint32(mode.Perm())
	if mode&os.ModeSetuid != 0 {
		m |= unix.S_ISUID
	}
	if mode&os.ModeSetgid != 0 {
		m |= unix.S_ISGID
	}
	if mode&os.ModeSticky != 0 {
		m |= unix.S_ISVTX
	}
	return m
}
