package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	crilogs "k8s.io/cri-client/pkg/logs"
	"k8s.io/cri-streaming/pkg/streaming"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	clocktesting "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// containers is what a CRI streaming server runs: exec echoes stdin (and
// reports the first terminal size), attach says hello, port-forward echoes.
type containers struct{}

func (containers) Exec(_ context.Context, id string, cmd []string, in io.Reader, out, _ io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error {
	defer out.Close()
	if tty {
		select {
		case size := <-resize:
			fmt.Fprintf(out, "size %dx%d\n", size.Width, size.Height)
		case <-time.After(30 * time.Second):
			fmt.Fprintln(out, "no resize")
		}
	}
	fmt.Fprintf(out, "%s in %s: ", strings.Join(cmd, " "), id)
	_, err := io.Copy(out, in)
	return err
}

func (containers) Attach(_ context.Context, id string, _ io.Reader, out, _ io.WriteCloser, _ bool, _ <-chan remotecommandserver.TerminalSize) error {
	defer out.Close()
	_, err := fmt.Fprintf(out, "attached to %s\n", id)
	return err
}

func (containers) PortForward(_ context.Context, sandbox string, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	buf := make([]byte, 5)
	if _, err := io.ReadFull(stream, buf); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stream, "%s:%d got %s", sandbox, port, buf)
	return err
}

// fakeRuntime implements the streaming capabilities over a CRI streaming
// server, and the log reader over a file.
type fakeRuntime struct {
	noderuntime.Runtime
	srv     streaming.Server
	logPath string
	lastID  noderuntime.ContainerID
}

func (f *fakeRuntime) GetExec(_ context.Context, id noderuntime.ContainerID, cmd []string, stdin, stdout, stderr, tty bool) (*url.URL, error) {
	resp, err := f.srv.GetExec(&runtimeapi.ExecRequest{ContainerId: id.ID, Cmd: cmd, Stdin: stdin, Stdout: stdout, Stderr: stderr, Tty: tty})
	if err != nil {
		return nil, err
	}
	return url.Parse(resp.Url)
}

func (f *fakeRuntime) GetAttach(_ context.Context, id noderuntime.ContainerID, stdin, stdout, stderr, tty bool) (*url.URL, error) {
	resp, err := f.srv.GetAttach(&runtimeapi.AttachRequest{ContainerId: id.ID, Stdin: stdin, Stdout: stdout, Stderr: stderr, Tty: tty})
	if err != nil {
		return nil, err
	}
	return url.Parse(resp.Url)
}

func (f *fakeRuntime) GetPortForward(_ context.Context, uid types.UID, _, _ string, ports []int32) (*url.URL, error) {
	resp, err := f.srv.GetPortForward(&runtimeapi.PortForwardRequest{PodSandboxId: "sandbox-of-" + string(uid), Port: ports})
	if err != nil {
		return nil, err
	}
	return url.Parse(resp.Url)
}

func (f *fakeRuntime) ReadLogs(ctx context.Context, id noderuntime.ContainerID, opts *crilogs.LogOptions, stdout, stderr io.Writer) error {
	f.lastID = id
	return crilogs.ReadLogs(ctx, f.logPath, id.ID, opts, nil, stdout, stderr)
}

// streamFixture serves the container routes over a fake runtime backed by
// a real CRI streaming server.
func streamFixture(t *testing.T) (*fakeRuntime, string) {
	t.Helper()
	return streamFixtureWith(t, nil)
}

// streamFixtureWith is streamFixture with the streams changed by edit.
func streamFixtureWith(t *testing.T, edit func(*streams)) (*fakeRuntime, string) {
	t.Helper()
	backend := httptest.NewUnstartedServer(nil)
	cfg := streaming.DefaultConfig
	cfg.Addr = backend.Listener.Addr().String()
	srv, err := streaming.NewServer(cfg, containers{})
	if err != nil {
		t.Fatal(err)
	}
	backend.Config.Handler = srv
	backend.Start()
	t.Cleanup(backend.Close)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid-1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name: "main", ContainerID: "containerd://c2",
			State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ContainerID: "containerd://c1"}},
		}}},
	}
	rt := &fakeRuntime{srv: srv}
	// Every stream goes through the idle timeout, as on the secure port
	// (its default is 4h; the fake clock never reaches it here).
	st := &streams{pods: podsFixed{pod}, runtime: rt, clk: clocktesting.NewFakeClock(time.Now()), log: logr.Discard(),
		idleTimeout: 4 * time.Hour}
	if edit != nil {
		edit(st)
	}
	mux := http.NewServeMux()
	st.register(mux)
	front := httptest.NewServer(mux)
	t.Cleanup(front.Close)
	return rt, front.URL
}

func TestExecIsProxiedOverSPDYAndWebSocket(t *testing.T) {
	_, base := streamFixture(t)
	u, _ := url.Parse(base + "/exec/ns/web/main?command=cat&command=-&input=1&output=1")
	spdy, err := remotecommand.NewSPDYExecutor(&rest.Config{Host: base}, "POST", u)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := remotecommand.NewWebSocketExecutor(&rest.Config{Host: base}, "GET", u.String())
	if err != nil {
		t.Fatal(err)
	}
	for name, ex := range map[string]remotecommand.Executor{"SPDY": spdy, "WebSocket v5": ws} {
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: strings.NewReader("x\n"), Stdout: &out})
		cancel()
		if err != nil || out.String() != "cat - in c2: x\n" {
			t.Errorf("%s: exec gave %q (err %v), want the container's echo", name, out.String(), err)
		}
	}
}

// sizeQueue hands out one terminal size.
type sizeQueue struct{ sent bool }

func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	if q.sent {
		return nil // no more resizes
	}
	q.sent = true
	return &remotecommand.TerminalSize{Width: 101, Height: 33}
}

func TestExecWithATerminalCarriesTheResize(t *testing.T) {
	_, base := streamFixture(t)
	u, _ := url.Parse(base + "/exec/ns/web/main?command=sh&input=1&output=1&tty=1")
	ws, err := remotecommand.NewWebSocketExecutor(&rest.Config{Host: base}, "GET", u.String())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = ws.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: strings.NewReader(""), Stdout: &out, Tty: true, TerminalSizeQueue: &sizeQueue{}})
	if err != nil || !strings.HasPrefix(out.String(), "size 101x33\n") {
		t.Errorf("tty exec gave %q (err %v), want the terminal size first", out.String(), err)
	}
}

func TestAttachIsProxied(t *testing.T) {
	_, base := streamFixture(t)
	u, _ := url.Parse(base + "/attach/ns/web/uid-1/main?output=1")
	ex, err := remotecommand.NewSPDYExecutor(&rest.Config{Host: base}, "POST", u)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out}); err != nil || out.String() != "attached to c2\n" {
		t.Errorf("attach gave %q (err %v)", out.String(), err)
	}
}

func TestPortForwardIsProxiedThroughTheWebSocketTunnel(t *testing.T) {
	_, base := streamFixture(t)
	u, _ := url.Parse(base + "/portForward/ns/web")
	dialer, err := portforward.NewSPDYOverWebsocketDialer(u, &rest.Config{Host: base})
	if err != nil {
		t.Fatal(err)
	}
	stop, ready := make(chan struct{}), make(chan struct{})
	defer close(stop)
	pf, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:8080"}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- pf.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errc:
		t.Fatalf("ForwardPorts: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("port-forward not ready in 30s")
	}
	ports, err := pf.GetPorts()
	if err != nil || len(ports) != 1 {
		t.Fatalf("ports %v: %v", ports, err)
	}
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", ports[0].Local), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(conn)
	if string(got) != "sandbox-of-uid-1:8080 got hello" {
		t.Errorf("through the forward: %q", got)
	}
}

func TestStreamRoutesRefuseWhatTheyCannotServe(t *testing.T) {
	_, base := streamFixture(t)
	tests := []struct {
		method, path string
		want         int
	}{
		{"POST", "/exec/ns/web/main?command=ls", http.StatusBadRequest},           // no stream asked for
		{"POST", "/exec/ns/nosuch/main?command=ls&output=1", http.StatusNotFound}, // no pod
		{"POST", "/exec/ns/web/other/main?command=ls&output=1", http.StatusNotFound},
		{"POST", "/exec/ns/web/sidecar?command=ls&output=1", http.StatusNotFound}, // no container
		{"POST", "/exec/ns/web/main?output=1", http.StatusBadRequest},             // no command
		{"POST", "/exec/ns/web/main?command=ls&output=1", http.StatusBadRequest},  // not an upgrade request
		{"POST", "/run/ns/web/main?cmd=ls", http.StatusNotImplemented},            // no CommandRunner
		{"DELETE", "/exec/ns/web/main", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, base+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s = %d, want %d", tt.method, tt.path, resp.StatusCode, tt.want)
		}
	}
}

func TestContainerLogsRoute(t *testing.T) {
	rt, base := streamFixture(t)
	rt.logPath = filepath.Join(t.TempDir(), "0.log")
	lines := "2026-12-01T10:00:00.000000001Z stdout F one\n" +
		"2026-12-01T10:00:01.000000001Z stderr F two\n" +
		"2026-12-01T10:00:02.000000001Z stdout P thr\n" +
		"2026-12-01T10:00:02.000000002Z stdout F ee\n"
	if err := os.WriteFile(rt.logPath, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query, want string
		wantID      string
		wantCode    int
	}{
		{query: "", want: "one\ntwo\nthree\n", wantID: "c2"},
		// As the kubelet's reader: tailLines and limitBytes count what is in
		// the file (a partial line is a line of its own).
		{query: "?tailLines=2", want: "three\n", wantID: "c2"},
		{query: "?tail=all", want: "one\ntwo\nthree\n", wantID: "c2"},
		{query: "?stream=Stderr", want: "two\n", wantID: "c2"},
		{query: "?limitBytes=5", want: "one\nt", wantID: "c2"},
		{query: "?timestamps=true&tailLines=1", want: "2026-12-01T10:00:02.000000002Z ee\n", wantID: "c2"},
		{query: "?sinceTime=2026-12-01T10:00:01Z", want: "two\nthree\n", wantID: "c2"},
		{query: "?previous=true", want: "one\ntwo\nthree\n", wantID: "c1"},
		{query: "?tailLines=-1", wantCode: http.StatusUnprocessableEntity},
		{query: "?sinceSeconds=1&sinceTime=2026-12-01T10:00:01Z", wantCode: http.StatusUnprocessableEntity},
		{query: "?follow=maybe", wantCode: http.StatusBadRequest},
	}
	for _, tt := range tests {
		rt.lastID = noderuntime.ContainerID{}
		resp, err := http.Get(base + "/containerLogs/ns/web/main" + tt.query)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := tt.wantCode
		if want == 0 {
			want = http.StatusOK
		}
		if resp.StatusCode != want || (want == http.StatusOK && (string(body) != tt.want || rt.lastID.ID != tt.wantID)) {
			t.Errorf("logs%s = %d %q from %q, want %d %q from %q", tt.query, resp.StatusCode, body, rt.lastID.ID, want, tt.want, tt.wantID)
		}
	}
	for path, want := range map[string]int{"/containerLogs/ns/nosuch/main": 404, "/containerLogs/ns/web/sidecar": 404} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
}
