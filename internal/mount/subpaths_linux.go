//go:build linux

package mount

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// UnmountAll unmounts whatever is mounted on path, without following a
// symlink there; a path that is no mount point is not an error.
func UnmountAll(path string) error {
	for i := 0; i < 8; i++ {
		err := unix.Unmount(path, unix.UMOUNT_NOFOLLOW)
		switch {
		case err == nil:
			continue
		case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOENT):
			return nil
		default:
			return fmt.Errorf("unmount %s: %w", path, err)
		}
	}
	return fmt.Errorf("unmount %s: still mounted after 8 unmounts", path)
}

// CleanSubPaths unmounts and removes the subPath mounts of the pod whose
// directory is podDir (<podDir>/volume-subpaths/<volume>/<container>/<n>)
// and their directories. It removes each entry with os.Remove, never
// recursively, so nothing is removed through a mount that remains.
func CleanSubPaths(podDir string) error {
	base := filepath.Join(podDir, SubPathsDir)
	vols, err := os.ReadDir(base)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, v := range vols {
		volDir := filepath.Join(base, v.Name())
		containers, err := os.ReadDir(volDir)
		if err != nil {
			return err
		}
		for _, c := range containers {
			if err := cleanContainerSubPaths(filepath.Join(volDir, c.Name())); err != nil {
				return err
			}
		}
		if err := os.Remove(volDir); err != nil {
			return err
		}
	}
	return os.Remove(base)
}

// cleanContainerSubPaths unmounts and removes each mount target in dir,
// then dir.
func cleanContainerSubPaths(dir string) error {
	targets, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, t := range targets {
		p := filepath.Join(dir, t.Name())
		if err := UnmountAll(p); err != nil {
			return err
		}
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return os.Remove(dir)
}
