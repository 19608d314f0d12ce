package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// imageSize is the size every simulated image reports.
const imageSize = 1 << 20

// image is an image in the simulated store. Names are compared as written:
// "busybox" and "docker.io/library/busybox:latest" are different images.
type image struct {
	id   string // "sha256:" + the SHA-256 of the name
	name string
}

func imageID(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// addImageLocked puts an image in the store and returns it.
func (r *Runtime) addImageLocked(name string) *image {
	if id, ok := r.imageNames[name]; ok {
		return r.images[id]
	}
	img := &image{id: imageID(name), name: name}
	r.images[img.id] = img
	r.imageNames[name] = img.id
	return img
}

// resolveImageLocked finds a present image by name or ID. With no
// Config.Images every image is present: an unknown name is added.
func (r *Runtime) resolveImageLocked(ref string) (*image, bool) {
	if img, ok := r.images[ref]; ok {
		return img, true
	}
	if id, ok := r.imageNames[ref]; ok {
		return r.images[id], true
	}
	if ref == "" || len(r.cfg.Images) > 0 {
		return nil, false
	}
	return r.addImageLocked(ref), true
}

func (img *image) api() *runtimeapi.Image {
	return &runtimeapi.Image{
		Id: img.id, RepoTags: []string{img.name}, Size: imageSize,
		Spec: &runtimeapi.ImageSpec{Image: img.name},
	}
}

// ListImages lists the images in the store, matching filter's image by name
// or ID when set.
func (r *Runtime) ListImages(ctx context.Context, filter *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error) {
	if err := r.begin(ctx, "ListImages"); err != nil {
		return nil, err
	}
	want := filter.GetImage().GetImage()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*runtimeapi.Image
	for _, img := range r.images {
		if want == "" || want == img.name || want == img.id {
			out = append(out, img.api())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RepoTags[0] < out[j].RepoTags[0] })
	return out, nil
}

// ImageStatus reports a present image, or a response without image when it
// is absent.
func (r *Runtime) ImageStatus(ctx context.Context, spec *runtimeapi.ImageSpec, _ bool) (*runtimeapi.ImageStatusResponse, error) {
	if err := r.begin(ctx, "ImageStatus"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	img, ok := r.resolveImageLocked(spec.GetImage())
	if !ok {
		return &runtimeapi.ImageStatusResponse{}, nil
	}
	return &runtimeapi.ImageStatusResponse{Image: img.api()}, nil
}

// PullImage "pulls" an image and returns its ID. When Config.Images is set
// it is the registry: pulling any other image fails with NotFound "image
// not found". Otherwise every pull succeeds.
func (r *Runtime) PullImage(ctx context.Context, spec *runtimeapi.ImageSpec, _ *runtimeapi.AuthConfig, _ *runtimeapi.PodSandboxConfig) (string, error) {
	if err := r.begin(ctx, "PullImage"); err != nil {
		return "", err
	}
	name := spec.GetImage()
	if name == "" {
		return "", status.Error(codes.InvalidArgument, "sim: pull of an empty image name")
	}
	if len(r.cfg.Images) > 0 && !slices.Contains(r.cfg.Images, name) {
		return "", status.Errorf(codes.NotFound, "sim: pull %q: image not found (the simulated registry holds %v)", name, r.cfg.Images)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.addImageLocked(name).id, nil
}

// RemoveImage removes an image from the store; removing an absent image is
// not an error.
func (r *Runtime) RemoveImage(ctx context.Context, spec *runtimeapi.ImageSpec) error {
	if err := r.begin(ctx, "RemoveImage"); err != nil {
		return err
	}
	ref := spec.GetImage()
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.imageNames[ref]
	if !ok {
		id = ref
	}
	if img, ok := r.images[id]; ok {
		delete(r.images, id)
		delete(r.imageNames, img.name)
	}
	return nil
}

// ImageFsInfo reports one simulated filesystem holding the images.
func (r *Runtime) ImageFsInfo(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error) {
	if err := r.begin(ctx, "ImageFsInfo"); err != nil {
		return nil, err
	}
	now := r.nanos()
	r.mu.Lock()
	n := uint64(len(r.images))
	r.mu.Unlock()
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{{
		Timestamp:  now,
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: "/sim/images"},
		UsedBytes:  &runtimeapi.UInt64Value{Value: n * imageSize},
		InodesUsed: &runtimeapi.UInt64Value{Value: n},
	}}}, nil
}
