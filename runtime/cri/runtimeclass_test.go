package cri

import (
	"context"
	"errors"
	"strings"
	"testing"

	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// fakeClasses is a RuntimeClassGetter over a map of class name to handler.
type fakeClasses map[string]string

func (f fakeClasses) GetRuntimeClass(_ context.Context, name string) (*nodev1.RuntimeClass, error) {
	h, ok := f[name]
	if !ok {
		return nil, apierrors.NewNotFound(nodev1.Resource("runtimeclass"), name)
	}
	return &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: h}, nil
}

// handlerRuntime reports runtime handlers in its Status, as containerd does.
type handlerRuntime struct {
	*recordingRuntime
	handlers []*runtimeapi.RuntimeHandler
}

func (r *handlerRuntime) Status(ctx context.Context, verbose bool) (*runtimeapi.StatusResponse, error) {
	resp, err := r.recordingRuntime.Status(ctx, verbose)
	if err != nil {
		return nil, err
	}
	resp.RuntimeHandlers = r.handlers
	return resp, nil
}

func TestRuntimeClassSelectsTheSandboxHandler(t *testing.T) {
	cases := []struct {
		name        string
		class       string
		getter      RuntimeClassGetter
		wantHandler string
		wantErr     string // in the failed CreatePodSandbox step; "" for success
	}{
		{"a pod without runtimeClassName gets the configured handler", "", fakeClasses{}, "default-h", ""},
		{"a RuntimeClass's handler is passed to RunPodSandbox", "fast", fakeClasses{"fast": "runc"}, "runc", ""},
		{"an unknown RuntimeClass fails the sandbox", "nope", fakeClasses{}, "", `runtimeclass.node.k8s.io "nope" not found`},
		{"a RuntimeClass without an API server fails the sandbox", "fast", nil, "", `cannot resolve RuntimeClass "fast": nodekit has no API server`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEnv(t, func(cfg *Config) { cfg.RuntimeHandler = "default-h" })
			if c.getter != nil {
				e.m.SetRuntimeClassGetter(c.getter)
			}
			pod := newPod("u1", "app")
			if c.class != "" {
				pod.Spec.RuntimeClassName = &c.class
			}
			result := e.sync(t, pod)
			if c.wantErr == "" {
				if err := result.Error(); err != nil {
					t.Fatalf("sync: %v", err)
				}
				if len(e.rs.sandboxHandlers) != 1 || e.rs.sandboxHandlers[0] != c.wantHandler {
					t.Fatalf("sandbox handlers = %q, want [%q]", e.rs.sandboxHandlers, c.wantHandler)
				}
				return
			}
			step, ok := failedSteps(result)["CreatePodSandbox/"+formatPod(pod)]
			if !ok || !strings.Contains(step.Err.Error(), c.wantErr) || !strings.HasPrefix(step.Message, "Failed to create pod sandbox: ") {
				t.Fatalf("failed steps = %+v, want CreatePodSandbox failing with %q", failedSteps(result), c.wantErr)
			}
			if !errors.Is(step.Err, noderuntime.ErrCreatePodSandbox) {
				t.Fatalf("error %v does not wrap ErrCreatePodSandbox", step.Err)
			}
			if len(e.rs.sandboxHandlers) != 0 {
				t.Fatalf("a sandbox was run with handlers %q", e.rs.sandboxHandlers)
			}
		})
	}
}

func TestHostUsersFalseIsRefused(t *testing.T) {
	userns := func(name string, ok bool) *runtimeapi.RuntimeHandler {
		return &runtimeapi.RuntimeHandler{Name: name, Features: &runtimeapi.RuntimeHandlerFeatures{UserNamespaces: ok}}
	}
	cases := []struct {
		name     string
		handlers []*runtimeapi.RuntimeHandler
		hostUser *bool
		wantErr  string
	}{
		{"hostUsers true runs", []*runtimeapi.RuntimeHandler{userns("", false)}, ptr(true), ""},
		{"hostUsers unset runs", nil, nil, ""},
		{"a handler without user namespaces refuses hostUsers false, naming the field",
			[]*runtimeapi.RuntimeHandler{userns("", false), userns("runc", false)}, ptr(false),
			`spec.hostUsers is false: RuntimeClass handler "" does not support user namespaces`},
		{"a handler with user namespaces is still refused: nodekit allocates no ID mappings",
			[]*runtimeapi.RuntimeHandler{userns("", true)}, ptr(false),
			"spec.hostUsers is false: user namespaces are not supported by nodekit yet"},
		{"a handler the runtime does not report is an error",
			[]*runtimeapi.RuntimeHandler{userns("runc", true)}, ptr(false), `spec.hostUsers is false: the handler "" is not known`},
		{"a runtime that reports no handlers is an error", nil, ptr(false), "spec.hostUsers is false: runtime handlers are not set"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.m.rs = &handlerRuntime{recordingRuntime: e.rs, handlers: c.handlers}
			pod := newPod("u1", "app")
			pod.Spec.HostUsers = c.hostUser
			result := e.sync(t, pod)
			if c.wantErr == "" {
				if err := result.Error(); err != nil {
					t.Fatalf("sync: %v", err)
				}
				return
			}
			step, ok := failedSteps(result)["CreatePodSandbox/"+formatPod(pod)]
			if !ok || !strings.Contains(step.Err.Error(), c.wantErr) {
				t.Fatalf("failed steps = %+v, want CreatePodSandbox failing with %q", failedSteps(result), c.wantErr)
			}
			if len(e.rs.sandboxConfigs) != 0 {
				t.Fatal("a sandbox was run for a refused pod")
			}
		})
	}
}
