package sim

import (
	"context"

	"google.golang.org/grpc"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// imageServer serves a criapi.ImageManagerService as the gRPC ImageService,
// as runtimeServer does for the runtime.
type imageServer struct {
	runtimeapi.UnimplementedImageServiceServer
	is criapi.ImageManagerService
}

func (s *imageServer) ListImages(ctx context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	imgs, err := s.is.ListImages(ctx, req.GetFilter())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ListImagesResponse{Images: imgs}, nil
}

func (s *imageServer) StreamImages(req *runtimeapi.StreamImagesRequest, stream grpc.ServerStreamingServer[runtimeapi.StreamImagesResponse]) error {
	imgs, err := s.is.ListImages(stream.Context(), req.GetFilter())
	if err != nil {
		return err
	}
	return stream.Send(&runtimeapi.StreamImagesResponse{Images: imgs})
}

func (s *imageServer) ImageStatus(ctx context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	return s.is.ImageStatus(ctx, req.GetImage(), req.GetVerbose())
}

func (s *imageServer) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	ref, err := s.is.PullImage(ctx, req.GetImage(), req.GetAuth(), req.GetSandboxConfig())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.PullImageResponse{ImageRef: ref}, nil
}

func (s *imageServer) RemoveImage(ctx context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	return &runtimeapi.RemoveImageResponse{}, s.is.RemoveImage(ctx, req.GetImage())
}

func (s *imageServer) ImageFsInfo(ctx context.Context, _ *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	return s.is.ImageFsInfo(ctx)
}
