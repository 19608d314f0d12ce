package nodestatus

import (
	"fmt"

	"golang.org/x/sys/unix"
)

func statfs(path string) (fsStats, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return fsStats{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	bs := int64(st.Bsize)
	return fsStats{
		capacity:   int64(st.Blocks) * bs,
		available:  int64(st.Bavail) * bs,
		inodes:     int64(st.Files),
		inodesFree: int64(st.Ffree),
	}, nil
}
