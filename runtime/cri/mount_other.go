//go:build !linux

package cri

import "errors"

// ensureTmpfs is not available off Linux: emptyDir medium Memory fails.
func ensureTmpfs(string, int64) error {
	return errors.New("emptyDir medium Memory needs Linux")
}

// unmountBelow has nothing to unmount off Linux, where nothing is mounted.
func unmountBelow(string) error { return nil }
