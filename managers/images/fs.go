package images

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ImageFsInfoer is the CRI call CRIImageFs reads.
type ImageFsInfoer interface {
	ImageFsInfo(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error)
}

// CRIImageFs is the default ImageFs: the runtime's image filesystem from
// CRI ImageFsInfo, its capacity and free space from statfs of its mount
// point, as the kubelet's CRI stats provider reads them.
type CRIImageFs struct {
	// Runtime answers ImageFsInfo.
	Runtime ImageFsInfoer
}

var _ ImageFs = CRIImageFs{}

// ImageFsUsage implements ImageFs.
func (f CRIImageFs) ImageFsUsage(ctx context.Context) (capacity, available uint64, err error) {
	resp, err := f.Runtime.ImageFsInfo(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("image filesystem info: %w", err)
	}
	fss := resp.GetImageFilesystems()
	if len(fss) == 0 || fss[0].GetFsId().GetMountpoint() == "" {
		return 0, 0, errors.New("the runtime reports no image filesystem mount point")
	}
	mp := fss[0].GetFsId().GetMountpoint()
	var st unix.Statfs_t
	if err := unix.Statfs(mp, &st); err != nil {
		return 0, 0, fmt.Errorf("statfs image filesystem %s: %w", mp, err)
	}
	bs := uint64(st.Bsize)
	return st.Blocks * bs, st.Bavail * bs, nil
}
