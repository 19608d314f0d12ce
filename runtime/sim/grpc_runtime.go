package sim

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilexec "k8s.io/utils/exec"
)

// runtimeServer serves a criapi.RuntimeService as the gRPC RuntimeService:
// each request is unpacked into an interface call and the result packed
// into the response. Errors pass through; gRPC status errors keep their
// code. Methods the adapter does not map answer Unimplemented.
type runtimeServer struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	rs criapi.RuntimeService
}

func (s *runtimeServer) Version(ctx context.Context, req *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return s.rs.Version(ctx, req.GetVersion())
}

func (s *runtimeServer) Status(ctx context.Context, req *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	return s.rs.Status(ctx, req.GetVerbose())
}

func (s *runtimeServer) RuntimeConfig(ctx context.Context, _ *runtimeapi.RuntimeConfigRequest) (*runtimeapi.RuntimeConfigResponse, error) {
	return s.rs.RuntimeConfig(ctx)
}

func (s *runtimeServer) UpdateRuntimeConfig(ctx context.Context, req *runtimeapi.UpdateRuntimeConfigRequest) (*runtimeapi.UpdateRuntimeConfigResponse, error) {
	return &runtimeapi.UpdateRuntimeConfigResponse{}, s.rs.UpdateRuntimeConfig(ctx, req.GetRuntimeConfig())
}

func (s *runtimeServer) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	id, err := s.rs.RunPodSandbox(ctx, req.GetConfig(), req.GetRuntimeHandler())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: id}, nil
}

func (s *runtimeServer) StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	return &runtimeapi.StopPodSandboxResponse{}, s.rs.StopPodSandbox(ctx, req.GetPodSandboxId())
}

func (s *runtimeServer) RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	return &runtimeapi.RemovePodSandboxResponse{}, s.rs.RemovePodSandbox(ctx, req.GetPodSandboxId())
}

func (s *runtimeServer) PodSandboxStatus(ctx context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	return s.rs.PodSandboxStatus(ctx, req.GetPodSandboxId(), req.GetVerbose())
}

func (s *runtimeServer) ListPodSandbox(ctx context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	items, err := s.rs.ListPodSandbox(ctx, req.GetFilter())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ListPodSandboxResponse{Items: items}, nil
}

func (s *runtimeServer) StreamPodSandboxes(req *runtimeapi.StreamPodSandboxesRequest, stream grpc.ServerStreamingServer[runtimeapi.StreamPodSandboxesResponse]) error {
	items, err := s.rs.ListPodSandbox(stream.Context(), req.GetFilter())
	if err != nil {
		return err
	}
	return stream.Send(&runtimeapi.StreamPodSandboxesResponse{PodSandboxes: items})
}

func (s *runtimeServer) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	id, err := s.rs.CreateContainer(ctx, req.GetPodSandboxId(), req.GetConfig(), req.GetSandboxConfig())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.CreateContainerResponse{ContainerId: id}, nil
}

func (s *runtimeServer) StartContainer(ctx context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	return &runtimeapi.StartContainerResponse{}, s.rs.StartContainer(ctx, req.GetContainerId())
}

func (s *runtimeServer) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	return &runtimeapi.StopContainerResponse{}, s.rs.StopContainer(ctx, req.GetContainerId(), req.GetTimeout())
}

func (s *runtimeServer) RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	return &runtimeapi.RemoveContainerResponse{}, s.rs.RemoveContainer(ctx, req.GetContainerId())
}

func (s *runtimeServer) ListContainers(ctx context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	cs, err := s.rs.ListContainers(ctx, req.GetFilter())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ListContainersResponse{Containers: cs}, nil
}

func (s *runtimeServer) StreamContainers(req *runtimeapi.StreamContainersRequest, stream grpc.ServerStreamingServer[runtimeapi.StreamContainersResponse]) error {
	cs, err := s.rs.ListContainers(stream.Context(), req.GetFilter())
	if err != nil {
		return err
	}
	return stream.Send(&runtimeapi.StreamContainersResponse{Containers: cs})
}

func (s *runtimeServer) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	return s.rs.ContainerStatus(ctx, req.GetContainerId(), req.GetVerbose())
}

func (s *runtimeServer) UpdateContainerResources(ctx context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	res := &runtimeapi.ContainerResources{Linux: req.GetLinux(), Windows: req.GetWindows()}
	return &runtimeapi.UpdateContainerResourcesResponse{}, s.rs.UpdateContainerResources(ctx, req.GetContainerId(), res)
}

func (s *runtimeServer) ReopenContainerLog(ctx context.Context, req *runtimeapi.ReopenContainerLogRequest) (*runtimeapi.ReopenContainerLogResponse, error) {
	return &runtimeapi.ReopenContainerLogResponse{}, s.rs.ReopenContainerLog(ctx, req.GetContainerId())
}

// ExecSync turns the interface's exit-code error back into the response's
// ExitCode, as the remote client expects it.
func (s *runtimeServer) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	stdout, stderr, err := s.rs.ExecSync(ctx, req.GetContainerId(), req.GetCmd(), time.Duration(req.GetTimeout())*time.Second)
	var exit utilexec.ExitError
	if errors.As(err, &exit) {
		return &runtimeapi.ExecSyncResponse{Stdout: stdout, Stderr: stderr, ExitCode: int32(exit.ExitStatus())}, nil
	}
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ExecSyncResponse{Stdout: stdout, Stderr: stderr}, nil
}

func (s *runtimeServer) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	return s.rs.Exec(ctx, req)
}

func (s *runtimeServer) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	return s.rs.Attach(ctx, req)
}

func (s *runtimeServer) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	return s.rs.PortForward(ctx, req)
}

func (s *runtimeServer) ContainerStats(ctx context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	st, err := s.rs.ContainerStats(ctx, req.GetContainerId())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ContainerStatsResponse{Stats: st}, nil
}

func (s *runtimeServer) ListContainerStats(ctx context.Context, req *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	st, err := s.rs.ListContainerStats(ctx, req.GetFilter())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ListContainerStatsResponse{Stats: st}, nil
}

func (s *runtimeServer) PodSandboxStats(ctx context.Context, req *runtimeapi.PodSandboxStatsRequest) (*runtimeapi.PodSandboxStatsResponse, error) {
	st, err := s.rs.PodSandboxStats(ctx, req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.PodSandboxStatsResponse{Stats: st}, nil
}

func (s *runtimeServer) ListPodSandboxStats(ctx context.Context, req *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	st, err := s.rs.ListPodSandboxStats(ctx, req.GetFilter())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ListPodSandboxStatsResponse{Stats: st}, nil
}

func (s *runtimeServer) CheckpointContainer(ctx context.Context, req *runtimeapi.CheckpointContainerRequest) (*runtimeapi.CheckpointContainerResponse, error) {
	return &runtimeapi.CheckpointContainerResponse{}, s.rs.CheckpointContainer(ctx, req)
}

func (s *runtimeServer) CheckpointPod(ctx context.Context, req *runtimeapi.CheckpointPodRequest) (*runtimeapi.CheckpointPodResponse, error) {
	return &runtimeapi.CheckpointPodResponse{}, s.rs.CheckpointPod(ctx, req)
}

func (s *runtimeServer) RestorePod(ctx context.Context, req *runtimeapi.RestorePodRequest) (*runtimeapi.RestorePodResponse, error) {
	return s.rs.RestorePod(ctx, req)
}

func (s *runtimeServer) UpdatePodSandboxResources(ctx context.Context, req *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	return s.rs.UpdatePodSandboxResources(ctx, req)
}

func (s *runtimeServer) ListMetricDescriptors(ctx context.Context, _ *runtimeapi.ListMetricDescriptorsRequest) (*runtimeapi.ListMetricDescriptorsResponse, error) {
	d, err := s.rs.ListMetricDescriptors(ctx)
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ListMetricDescriptorsResponse{Descriptors: d}, nil
}

func (s *runtimeServer) ListPodSandboxMetrics(ctx context.Context, _ *runtimeapi.ListPodSandboxMetricsRequest) (*runtimeapi.ListPodSandboxMetricsResponse, error) {
	m, err := s.rs.ListPodSandboxMetrics(ctx)
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ListPodSandboxMetricsResponse{PodMetrics: m}, nil
}

// GetContainerEvents relays the interface's event stream until the client
// goes away or Serve stops.
func (s *runtimeServer) GetContainerEvents(_ *runtimeapi.GetEventsRequest, stream grpc.ServerStreamingServer[runtimeapi.ContainerEventResponse]) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	ch := make(chan *runtimeapi.ContainerEventResponse, 64)
	errc := make(chan error, 1)
	go func() { errc <- s.rs.GetContainerEvents(ctx, ch, nil) }()
	for {
		select {
		case ev := <-ch:
			if err := stream.Send(ev); err != nil {
				cancel()
				<-errc
				return err
			}
		case err := <-errc:
			return err
		}
	}
}
