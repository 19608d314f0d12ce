package cri

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakeapi "k8s.io/cri-api/pkg/apis/testing"
	crilogs "k8s.io/cri-client/pkg/logs"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestReadLogsFollowsAcrossARotation(t *testing.T) {
	e := newTestEnv(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "0.log")
	write := func(p, line string) {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("2026-12-01T10:00:00.000000001Z stdout F " + line + "\n"); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	write(path, "before")
	e.rs.SetFakeContainers([]*fakeapi.FakeContainer{{ContainerStatus: runtimeapi.ContainerStatus{
		Id: "c1", State: runtimeapi.ContainerState_CONTAINER_RUNNING, LogPath: path,
	}}})

	// The reader asks for the container's status once for the log path and
	// again each time it waits for more, after it started watching the
	// directory: the second call means a rotation will be seen.
	hooked := &statusCalls{recordingRuntime: e.rs, calls: make(chan struct{}, 64)}
	m := NewManager(hooked, e.is, e.clk, logr.Discard(), e.cfg)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- m.ReadLogs(ctx, noderuntime.ContainerID{Type: "containerd", ID: "c1"}, &crilogs.LogOptions{Follow: true}, pw, pw)
		pw.Close()
	}()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() string {
		t.Helper()
		select {
		case l := <-lines:
			return l
		case <-time.After(30 * time.Second):
			t.Fatal("no log line within 30s")
		}
		return ""
	}
	if l := next(); l != "before" {
		t.Fatalf("first line %q", l)
	}
	for i := 0; i < 2; i++ {
		select {
		case <-hooked.calls:
		case <-time.After(30 * time.Second):
			t.Fatal("the reader does not wait for more log")
		}
	}
	// Rotate as the kubelet's log manager does: rename, then the runtime
	// reopens a new file under the same name.
	if err := os.Rename(path, path+".20261201-100000"); err != nil {
		t.Fatal(err)
	}
	write(path, "after")
	if l := next(); l != "after" {
		t.Fatalf("after the rotation got %q, want the new file's line", l)
	}
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "context cancelled") {
		t.Logf("ReadLogs ended with %v", err)
	}
}

// statusCalls signals every ContainerStatus call.
type statusCalls struct {
	*recordingRuntime
	calls chan struct{}
}

func (s *statusCalls) ContainerStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	defer func() { s.calls <- struct{}{} }()
	return s.recordingRuntime.ContainerStatus(ctx, id, verbose)
}

func TestStreamingCallsNeedARuntimeURL(t *testing.T) {
	e := newTestEnv(t)
	id := noderuntime.ContainerID{Type: "containerd", ID: "c1"}
	if _, err := e.m.GetExec(context.Background(), id, []string{"ls"}, false, true, false, false); err == nil ||
		!strings.Contains(err.Error(), "no streaming URL") {
		t.Errorf("GetExec with a runtime that returns no URL: %v", err)
	}
	if _, err := e.m.GetPortForward(context.Background(), "nosuch", "p", "ns", nil); err == nil ||
		!strings.Contains(err.Error(), "no ready sandbox") {
		t.Errorf("GetPortForward without a sandbox: %v", err)
	}
}
