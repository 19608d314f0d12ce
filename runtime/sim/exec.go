package sim

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilexec "k8s.io/utils/exec"
)

// ExecSync returns the container's scripted exec result whatever cmd is:
// the exec annotation (default exit code 0, no output), replaced by the
// exec-after one once the container has run long enough. A non-zero exit
// code is returned, as the CRI client returns it, as a
// k8s.io/utils/exec.CodeExitError along with the stdout. A container that
// does not run is a FailedPrecondition error.
func (r *Runtime) ExecSync(ctx context.Context, containerID string, cmd []string, _ time.Duration) (stdout []byte, stderr []byte, err error) {
	if err := r.begin(ctx, "ExecSync"); err != nil {
		return nil, nil, err
	}
	now := r.nanos()
	r.mu.Lock()
	c, err := r.containerLocked(containerID)
	if err != nil {
		r.mu.Unlock()
		return nil, nil, err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		r.mu.Unlock()
		return nil, nil, status.Errorf(codes.FailedPrecondition, "sim: container %q is not running", c.id)
	}
	res := c.script.execResultAt(time.Duration(now - c.startedAt))
	r.mu.Unlock()
	if res.code != 0 {
		return []byte(res.stdout), nil, utilexec.CodeExitError{
			Err:  fmt.Errorf("command '%s' exited with %d: ", strings.Join(cmd, " "), res.code),
			Code: int(res.code),
		}
	}
	return []byte(res.stdout), nil, nil
}

// Exec is not implemented: nothing runs in a simulated container.
func (r *Runtime) Exec(context.Context, *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	return nil, unimplemented("Exec")
}

// Attach is not implemented.
func (r *Runtime) Attach(context.Context, *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	return nil, unimplemented("Attach")
}

// PortForward is not implemented.
func (r *Runtime) PortForward(context.Context, *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	return nil, unimplemented("PortForward")
}

// CheckpointContainer is not implemented.
func (r *Runtime) CheckpointContainer(context.Context, *runtimeapi.CheckpointContainerRequest) error {
	return unimplemented("CheckpointContainer")
}

// CheckpointPod is not implemented.
func (r *Runtime) CheckpointPod(context.Context, *runtimeapi.CheckpointPodRequest) error {
	return unimplemented("CheckpointPod")
}

// RestorePod is not implemented.
func (r *Runtime) RestorePod(context.Context, *runtimeapi.RestorePodRequest) (*runtimeapi.RestorePodResponse, error) {
	return nil, unimplemented("RestorePod")
}

// UpdatePodSandboxResources is not implemented.
func (r *Runtime) UpdatePodSandboxResources(context.Context, *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	return nil, unimplemented("UpdatePodSandboxResources")
}

// ListMetricDescriptors is not implemented.
func (r *Runtime) ListMetricDescriptors(context.Context) ([]*runtimeapi.MetricDescriptor, error) {
	return nil, unimplemented("ListMetricDescriptors")
}

// ListPodSandboxMetrics is not implemented.
func (r *Runtime) ListPodSandboxMetrics(context.Context) ([]*runtimeapi.PodSandboxMetrics, error) {
	return nil, unimplemented("ListPodSandboxMetrics")
}
