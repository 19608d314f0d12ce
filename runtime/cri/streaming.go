package cri

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	crilogs "k8s.io/cri-client/pkg/logs"
	"k8s.io/klog/v2"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

var (
	_ noderuntime.Streamer      = (*Manager)(nil)
	_ noderuntime.CommandRunner = (*Manager)(nil)
	_ noderuntime.LogReader     = (*Manager)(nil)
)

// GetExec implements runtime.Streamer through the CRI Exec call.
func (m *Manager) GetExec(ctx context.Context, id noderuntime.ContainerID, cmd []string, stdin, stdout, stderr, tty bool) (*url.URL, error) {
	resp, err := m.rs.Exec(ctx, &runtimeapi.ExecRequest{
		ContainerId: id.ID, Cmd: cmd, Stdin: stdin, Stdout: stdout, Stderr: stderr, Tty: tty,
	})
	if err != nil {
		return nil, fmt.Errorf("exec in container %s: %w", id, err)
	}
	return parseStreamURL(resp.GetUrl())
}

// GetAttach implements runtime.Streamer through the CRI Attach call.
func (m *Manager) GetAttach(ctx context.Context, id noderuntime.ContainerID, stdin, stdout, stderr, tty bool) (*url.URL, error) {
	resp, err := m.rs.Attach(ctx, &runtimeapi.AttachRequest{
		ContainerId: id.ID, Stdin: stdin, Stdout: stdout, Stderr: stderr, Tty: tty,
	})
	if err != nil {
		return nil, fmt.Errorf("attach to container %s: %w", id, err)
	}
	return parseStreamURL(resp.GetUrl())
}

// GetPortForward implements runtime.Streamer through the CRI PortForward
// call on the pod's newest ready sandbox.
func (m *Manager) GetPortForward(ctx context.Context, podUID types.UID, name, namespace string, ports []int32) (*url.URL, error) {
	st, err := m.GetPodStatus(ctx, podUID, name, namespace)
	if err != nil {
		return nil, fmt.Errorf("port-forward to pod %s/%s: %w", namespace, name, err)
	}
	var sandboxID string
	for _, sb := range st.SandboxStatuses {
		if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			sandboxID = sb.GetId()
			break
		}
	}
	if sandboxID == "" {
		return nil, fmt.Errorf("port-forward to pod %s/%s: the pod has no ready sandbox", namespace, name)
	}
	resp, err := m.rs.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: sandboxID, Port: ports})
	if err != nil {
		return nil, fmt.Errorf("port-forward to pod %s/%s: %w", namespace, name, err)
	}
	return parseStreamURL(resp.GetUrl())
}

// RunInContainer implements runtime.CommandRunner through the CRI ExecSync
// call, as the kubelet's RunInContainer does: stdout and stderr together.
func (m *Manager) RunInContainer(ctx context.Context, id noderuntime.ContainerID, cmd []string, timeout time.Duration) ([]byte, error) {
	stdout, stderr, err := m.rs.ExecSync(ctx, id.ID, cmd, timeout)
	out := append(stdout, stderr...)
	if err != nil {
		return out, fmt.Errorf("run %q in container %s: %w", cmd, id, err)
	}
	return out, nil
}

// ReadLogs implements runtime.LogReader with k8s.io/cri-client's reader of
// the CRI log format, at the log path the runtime reports for the
// container. Following reopens the file when it is rotated.
func (m *Manager) ReadLogs(ctx context.Context, id noderuntime.ContainerID, opts *crilogs.LogOptions, stdout, stderr io.Writer) error {
	resp, err := m.rs.ContainerStatus(ctx, id.ID, false)
	if err != nil {
		return fmt.Errorf("status of container %s: %w", id, err)
	}
	path := resp.GetStatus().GetLogPath()
	if path == "" {
		return fmt.Errorf("container %s has no log path", id)
	}
	ctx = klog.NewContext(ctx, m.log.WithName("logs"))
	return crilogs.ReadLogs(ctx, path, id.ID, opts, m.rs, stdout, stderr)
}

// parseStreamURL parses the URL a CRI streaming call returned.
func parseStreamURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("the runtime returned no streaming URL")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the runtime returned an invalid streaming URL %q: %w", raw, err)
	}
	return u, nil
}
