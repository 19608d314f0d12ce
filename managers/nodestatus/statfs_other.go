//go:build !linux

package nodestatus

import (
	"errors"
	"fmt"
)

func statfs(path string) (fsStats, error) {
	return fsStats{}, fmt.Errorf("statfs %s: %w", path, errors.ErrUnsupported)
}
