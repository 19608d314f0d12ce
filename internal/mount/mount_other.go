//go:build !linux

package mount

import "errors"

// EnsureTmpfs is not available off Linux: it fails.
func EnsureTmpfs(string, int64) error {
	return errors.New("a tmpfs needs Linux")
}

// UnmountBelow has nothing to unmount off Linux, where nothing is mounted.
func UnmountBelow(string) error { return nil }

// Points returns no mount points off Linux.
func Points() (map[string]bool, error) { return map[string]bool{}, nil }

// IsTmpfsMountPoint is false off Linux, where nothing is mounted.
func IsTmpfsMountPoint(string) bool { return false }

// CleanSubPaths has nothing to clean off Linux, where nothing is mounted.
func CleanSubPaths(string) error { return nil }

// UnmountAll has nothing to unmount off Linux, where nothing is mounted.
func UnmountAll(string) error { return nil }
