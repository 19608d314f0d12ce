package runtime

import (
	"context"
	"io"
	"net/url"
	"time"

	"k8s.io/apimachinery/pkg/types"
	crilogs "k8s.io/cri-client/pkg/logs"
)

// Streamer is an optional capability of a Runtime: exec, attach and
// port-forward through the runtime's streaming server. As the CRI does it,
// each call asks the runtime to prepare a session and returns the URL of its
// streaming server that serves it; the node's HTTP server proxies the
// client's upgraded connection (SPDY or WebSocket) to that URL. The node
// server finds the capability by type assertion and answers 501 for these
// routes without it. Methods are safe for concurrent use and do not block
// beyond the runtime call.
type Streamer interface {
	// GetExec prepares the command cmd in the running container id and
	// returns the URL that serves its streams. stdin, stdout, stderr and tty
	// say which streams the client will open.
	GetExec(ctx context.Context, id ContainerID, cmd []string, stdin, stdout, stderr, tty bool) (*url.URL, error)
	// GetAttach prepares an attach to the running container id's main
	// process and returns the URL that serves it.
	GetAttach(ctx context.Context, id ContainerID, stdin, stdout, stderr, tty bool) (*url.URL, error)
	// GetPortForward prepares forwarding to ports (empty: any port the
	// client asks for) in the network namespace of the pod's ready sandbox
	// and returns the URL that serves it. It fails when the pod has no
	// ready sandbox.
	GetPortForward(ctx context.Context, podUID types.UID, name, namespace string, ports []int32) (*url.URL, error)
}

// CommandRunner is an optional capability of a Runtime: running a command
// in a container to its end, for the node server's /run route.
type CommandRunner interface {
	// RunInContainer runs cmd in the running container id and returns its
	// stdout and stderr together. A timeout of 0 means none. A non-zero
	// exit is an error that carries the output.
	RunInContainer(ctx context.Context, id ContainerID, cmd []string, timeout time.Duration) ([]byte, error)
}

// LogReader is an optional capability of a Runtime: reading a container's
// log in the CRI log format, for the node server's /containerLogs route.
type LogReader interface {
	// ReadLogs writes the log of container id to stdout and stderr (by the
	// stream each line was written to) as opts ask. With opts.Follow it
	// blocks until the container stops or ctx ends, and keeps following
	// when the log file is rotated.
	ReadLogs(ctx context.Context, id ContainerID, opts *crilogs.LogOptions, stdout, stderr io.Writer) error
}
