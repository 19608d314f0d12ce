package prober

import (
	"context"
	"errors"
	"fmt"
	"time"

	criapi "k8s.io/cri-api/pkg/apis"
	criclient "k8s.io/cri-client/pkg"
	utilexec "k8s.io/utils/exec"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// CRIExec is the ExecRunner of a CRI runtime service (as k8s.io/cri-client
// returns it). That client's ExecSync reports a non-zero exit code as a
// k8s.io/utils/exec.CodeExitError (an exec.ExitError carrying the code) and
// a command that outran its timeout as an error wrapping
// criclient.ErrCommandTimedOut; CRIExec turns the first into an exit code
// with a nil error and the second into an error wrapping ErrExecTimeout.
type CRIExec struct {
	// Service runs the commands; only its ExecSync is used.
	Service criapi.RuntimeService
}

var _ ExecRunner = CRIExec{}

// ExecSync runs cmd in the container named by its "type://id" (a bare ID is
// passed on as is).
func (e CRIExec) ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) ([]byte, []byte, int, error) {
	id := containerID
	if parsed, err := noderuntime.ParseContainerID(containerID); err == nil {
		id = parsed.ID
	}
	stdout, stderr, err := e.Service.ExecSync(ctx, id, cmd, timeout)
	if err == nil {
		return stdout, stderr, 0, nil
	}
	var exit utilexec.ExitError
	if errors.As(err, &exit) {
		return stdout, stderr, exit.ExitStatus(), nil
	}
	if errors.Is(err, criclient.ErrCommandTimedOut) {
		return stdout, stderr, 0, fmt.Errorf("exec in container %s: %w: %w", containerID, ErrExecTimeout, err)
	}
	return stdout, stderr, 0, fmt.Errorf("exec in container %s: %w", containerID, err)
}
