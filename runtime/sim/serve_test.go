package sim

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	criclient "k8s.io/cri-client/pkg"
	utilexec "k8s.io/utils/exec"
)

// served is the runtime of an env served on a socket, with CRI clients.
type served struct {
	sock string
	rs   criapi.RuntimeService
	is   criapi.ImageManagerService
	// stop stops Serve and returns its error; it is idempotent.
	stop func() error
}

// serve serves e's runtime on a temporary socket; everything stops at the
// end of the test.
func (e *env) serve() served {
	e.t.Helper()
	// A short directory: unix socket paths are limited to 108 bytes.
	dir, err := os.MkdirTemp("", "nodekit-sim")
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { os.RemoveAll(dir) })
	s := served{sock: filepath.Join(dir, "sim.sock")}
	l, err := net.Listen("unix", s.sock)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := async(func() error { return Serve(ctx, l, e.r, e.r) })
	s.stop = sync.OnceValue(func() error {
		cancel()
		return result(e.t, done, "Serve")
	})
	bctx, bcancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer bcancel()
	if s.rs, err = criclient.NewRemoteRuntimeServiceBuilder().WithEndpoint("unix://" + s.sock).
		WithConnectionTimeout(10 * time.Second).WithTracerProvider(nil).Build(bctx); err != nil {
		e.t.Fatal(err)
	}
	if s.is, err = criclient.NewRemoteImageServiceBuilder().WithEndpoint("unix://" + s.sock).
		WithConnectionTimeout(10 * time.Second).WithTracerProvider(nil).Build(bctx); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = s.rs.Close(context.Background())
		_ = s.is.Close(context.Background())
		if err := s.stop(); err != nil {
			e.t.Errorf("Serve returned %v, want nil", err)
		}
	})
	return s
}

func TestServeSpeaksCRIOverGRPC(t *testing.T) {
	e := newEnv(t, Config{Images: []string{"busybox:1"}})
	s := e.serve()
	rs, is, ctx := s.rs, s.is, e.ctx
	v, err := rs.Version(ctx, "v1")
	if err != nil || v.RuntimeName != "sim" {
		t.Fatalf("Version = %v, %v", v, err)
	}
	sb, err := rs.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata:    &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "default", Uid: "u1"},
		Annotations: map[string]string{"sim.nodekit.io/app.exec": "4:nope"},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := is.PullImage(ctx, &runtimeapi.ImageSpec{Image: "busybox:1"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := rs.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Image: &runtimeapi.ImageSpec{Image: ref},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	cs, err := rs.ListContainers(ctx, &runtimeapi.ContainerFilter{PodSandboxId: sb})
	if err != nil || len(cs) != 1 || cs[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("ListContainers = %v, %v", cs, err)
	}
	out, _, err := rs.ExecSync(ctx, id, []string{"probe"}, time.Second)
	var exit utilexec.ExitError
	if !errors.As(err, &exit) || exit.ExitStatus() != 4 || string(out) != "nope" {
		t.Fatalf("ExecSync = %q, %v; want exit code 4 with stdout", out, err)
	}
	if _, err := rs.ContainerStatus(ctx, "unknown", false); status.Code(err) != codes.NotFound {
		t.Fatalf("status of an unknown container: %v, want NotFound over gRPC", err)
	}
	if _, err := is.PullImage(ctx, &runtimeapi.ImageSpec{Image: "nginx:1"}, nil, nil); status.Code(err) != codes.NotFound {
		t.Fatalf("pull of a missing image: %v, want NotFound over gRPC", err)
	}
	if _, err := rs.Attach(ctx, &runtimeapi.AttachRequest{ContainerId: id}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("Attach: %v, want Unimplemented", err)
	}
}

func TestServeStreamsContainerEventsAndStopsWithAStreamOpen(t *testing.T) {
	e := newEnv(t, Config{})
	s := e.serve()
	rs, ctx := s.rs, e.ctx
	ch := make(chan *runtimeapi.ContainerEventResponse, 10)
	established := make(chan struct{})
	done := async(func() error {
		return rs.GetContainerEvents(ctx, ch, func(runtimeapi.RuntimeService_GetContainerEventsClient) { close(established) })
	})
	<-established
	// The stream is open on the client; wait until the server subscribed too.
	waitFor(t, func() bool {
		e.r.mu.Lock()
		defer e.r.mu.Unlock()
		return len(e.r.subs) == 1
	})
	sb := e.sandbox(nil)
	select {
	case ev := <-ch:
		if ev.ContainerId != sb || ev.PodSandboxStatus.GetMetadata().GetName() != "web" {
			t.Fatalf("event %v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event over gRPC")
	}
	if err := s.stop(); err != nil {
		t.Fatalf("Serve returned %v, want nil", err)
	}
	if err := result(t, done, "GetContainerEvents"); err == nil {
		t.Fatal("the client's stream ended without an error")
	}
}
