package sim

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type env struct {
	t   *testing.T
	r   *Runtime
	clk *clocktesting.FakeClock
	ctx context.Context
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(epoch)
	return &env{t: t, r: New(clk, logr.Discard(), cfg), clk: clk, ctx: klog.NewContext(t.Context(), logr.Discard())}
}

// sandbox runs a sandbox for pod "web" with the given annotations.
func (e *env) sandbox(annotations map[string]string) string {
	e.t.Helper()
	return e.namedSandbox("web", 0, annotations)
}

func (e *env) namedSandbox(name string, attempt uint32, annotations map[string]string) string {
	e.t.Helper()
	id, err := e.r.RunPodSandbox(e.ctx, &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: "uid-" + name, Attempt: attempt},
		Labels:       map[string]string{"app": name},
		Annotations:  annotations,
		LogDirectory: "/logs/" + name,
	}, "")
	if err != nil {
		e.t.Fatalf("RunPodSandbox: %v", err)
	}
	return id
}

// create creates container name in sandbox sb.
func (e *env) create(sb, name string) string {
	e.t.Helper()
	id, err := e.createErr(sb, name, 0)
	if err != nil {
		e.t.Fatalf("CreateContainer %s: %v", name, err)
	}
	return id
}

func (e *env) createErr(sb, name string, attempt uint32) (string, error) {
	return e.r.CreateContainer(e.ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
		Image:    &runtimeapi.ImageSpec{Image: "busybox:1", UserSpecifiedImage: "busybox:1"},
		Labels:   map[string]string{"container": name},
		LogPath:  name + "/0.log",
	}, nil)
}

// start creates and starts container name in sandbox sb.
func (e *env) start(sb, name string) string {
	e.t.Helper()
	id := e.create(sb, name)
	if err := e.r.StartContainer(e.ctx, id); err != nil {
		e.t.Fatalf("StartContainer %s: %v", name, err)
	}
	return id
}

func (e *env) status(id string) *runtimeapi.ContainerStatus {
	e.t.Helper()
	resp, err := e.r.ContainerStatus(e.ctx, id, false)
	if err != nil {
		e.t.Fatalf("ContainerStatus %s: %v", id, err)
	}
	return resp.GetStatus()
}

// async runs f in a goroutine and returns a channel with its error.
func async(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

// waitWaiters yields until the fake clock has at least n waiters, so that a
// blocked call has registered its timer before the test steps the clock.
func (e *env) waitWaiters(n int) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.clk.Waiters() < n {
		if time.Now().After(deadline) {
			e.t.Fatalf("clock has %d waiters, want %d", e.clk.Waiters(), n)
		}
		runtime.Gosched()
	}
}

// pending asserts that ch has not delivered yet.
func pending(t *testing.T, ch <-chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s returned early: %v", what, err)
	default:
	}
}

// result waits for ch, bounded in real time.
func result(t *testing.T, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return", what)
		return nil
	}
}
