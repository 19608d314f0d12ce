//go:build !linux

package cri

import (
	"errors"
	"os"
)

// bindSubPath is not available off Linux: a subPath needs a bind mount
// of an opened descriptor.
func bindSubPath(string, string, os.FileMode, string) error {
	return errors.New("subPath mounts need Linux")
}
