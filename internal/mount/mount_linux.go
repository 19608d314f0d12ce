//go:build linux

package mount

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// mountInfo is the kernel's table of this process's mounts.
const mountInfo = "/proc/self/mountinfo"

// EnsureTmpfs mounts a tmpfs on dir unless one is mounted there already;
// size in bytes, 0 for the kernel's default (half the memory).
func EnsureTmpfs(dir string, size int64) error {
	points, err := Points()
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	if points[real] {
		return nil
	}
	opts := "mode=0777"
	if size > 0 {
		opts += ",size=" + strconv.FormatInt(size, 10)
	}
	if err := syscall.Mount("tmpfs", real, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount tmpfs on %s: %w", real, err)
	}
	return nil
}

// UnmountBelow unmounts every mount at or below dir, deepest first.
func UnmountBelow(dir string) error {
	points, err := Points()
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	var below []string
	for p := range points {
		if p == real || strings.HasPrefix(p, real+"/") {
			below = append(below, p)
		}
	}
	sort.Slice(below, func(i, j int) bool { return len(below[i]) > len(below[j]) })
	for _, p := range below {
		if err := syscall.Unmount(p, 0); err != nil && !errors.Is(err, syscall.EINVAL) {
			return fmt.Errorf("unmount %s: %w", p, err)
		}
	}
	return nil
}

// Points returns the set of mount points of this process.
func Points() (map[string]bool, error) {
	f, err := os.Open(mountInfo)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	points := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 {
			points[UnescapePath(fields[4])] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", mountInfo, err)
	}
	return points, nil
}

// tmpfsMagic is the statfs f_type of a tmpfs.
const tmpfsMagic = 0x01021994

// IsTmpfsMountPoint reports, cheaply (two stats and a statfs, no
// mountinfo), whether dir is the root of a tmpfs mount: it is on a tmpfs
// and on another device than its parent, as the kubelet's
// IsLikelyNotMountPoint tells mount points apart. A tmpfs bind-mounted
// from the same device is not seen; callers fall back to EnsureTmpfs.
func IsTmpfsMountPoint(dir string) bool {
	var st, parent syscall.Stat_t
	if syscall.Stat(dir, &st) != nil || syscall.Stat(filepath.Dir(dir), &parent) != nil || st.Dev == parent.Dev {
		return false
	}
	var fs syscall.Statfs_t
	return syscall.Statfs(dir, &fs) == nil && int64(fs.Type) == tmpfsMagic
}
