package sim

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestImagesListedInConfigAreTheRegistry(t *testing.T) {
	e := newEnv(t, Config{Images: []string{"busybox:1", "pause:1"}})
	spec := func(name string) *runtimeapi.ImageSpec { return &runtimeapi.ImageSpec{Image: name} }
	st, err := e.r.ImageStatus(e.ctx, spec("busybox:1"), false)
	if err != nil || st.GetImage().GetId() != imageID("busybox:1") {
		t.Fatalf("status of a present image: %v, %v", st, err)
	}
	if st, err := e.r.ImageStatus(e.ctx, spec("nginx:1"), false); err != nil || st.GetImage() != nil {
		t.Fatalf("status of an absent image: %v, %v", st, err)
	}
	_, err = e.r.PullImage(e.ctx, spec("nginx:1"), nil, nil)
	if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), "image not found") {
		t.Fatalf("pull of an image not in the registry: %v", err)
	}
	if err := e.r.RemoveImage(e.ctx, spec("busybox:1")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.createErr(e.sandbox(nil), "app", 0); status.Code(err) != codes.NotFound {
		t.Fatalf("create with a removed image: %v, want NotFound", err)
	}
	ref, err := e.r.PullImage(e.ctx, spec("busybox:1"), nil, nil)
	if err != nil || ref != imageID("busybox:1") {
		t.Fatalf("pull of a registry image: %q, %v", ref, err)
	}
	imgs, err := e.r.ListImages(e.ctx, nil)
	if err != nil || len(imgs) != 2 {
		t.Fatalf("ListImages = %v, %v", imgs, err)
	}
	fs, err := e.r.ImageFsInfo(e.ctx)
	if err != nil || fs.ImageFilesystems[0].UsedBytes.Value != 2*imageSize {
		t.Fatalf("ImageFsInfo = %v, %v", fs, err)
	}
}

func TestWithoutConfiguredImagesEveryImageIsPresent(t *testing.T) {
	e := newEnv(t, Config{})
	st, err := e.r.ImageStatus(e.ctx, &runtimeapi.ImageSpec{Image: "anything:9"}, false)
	if err != nil || st.GetImage() == nil {
		t.Fatalf("ImageStatus = %v, %v", st, err)
	}
	if _, err := e.r.PullImage(e.ctx, &runtimeapi.ImageSpec{Image: "other:1"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	imgs, err := e.r.ListImages(e.ctx, &runtimeapi.ImageFilter{Image: &runtimeapi.ImageSpec{Image: "other:1"}})
	if err != nil || len(imgs) != 1 || imgs[0].RepoTags[0] != "other:1" {
		t.Fatalf("ListImages = %v, %v", imgs, err)
	}
	id := e.create(e.sandbox(nil), "app")
	if st := e.status(id); st.ImageRef != imageID("busybox:1") || st.Image.UserSpecifiedImage != "busybox:1" {
		t.Fatalf("container image %v ref %s", st.Image, st.ImageRef)
	}
}
