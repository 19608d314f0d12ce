package cri

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
)

// execRuntime is a recordingRuntime whose ExecSync runs a test function and
// records the commands.
type execRuntime struct {
	*recordingRuntime
	exec func(ctx context.Context, id string, cmd []string) error

	mu    sync.Mutex
	calls [][]string
}

func (r *execRuntime) ExecSync(ctx context.Context, id string, cmd []string, _ time.Duration) ([]byte, []byte, error) {
	r.mu.Lock()
	r.calls = append(r.calls, slices.Clone(cmd))
	r.mu.Unlock()
	if r.exec == nil {
		return nil, nil, nil
	}
	return []byte("out"), nil, r.exec(ctx, id, cmd)
}

func (r *execRuntime) execCalls() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// withExec makes the env's manager run execs through fn.
func (e *testEnv) withExec(fn func(ctx context.Context, id string, cmd []string) error) *execRuntime {
	x := &execRuntime{recordingRuntime: e.rs, exec: fn}
	e.m.rs = x
	e.m.hooks = newHookRunner(x, e.clk)
	return x
}

// fakeRecorder records events as "Type Reason fieldPath: message" (the pod's
// name instead of the field path for events about the pod).
type fakeRecorder struct {
	mu     sync.Mutex
	events []string
}

func (f *fakeRecorder) Eventf(obj apiruntime.Object, eventType, reason, format string, args ...any) {
	where := ""
	switch o := obj.(type) {
	case *corev1.ObjectReference:
		where = o.FieldPath
	case *corev1.Pod:
		where = "pod " + o.Name
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, fmt.Sprintf("%s %s %s: %s", eventType, reason, where, fmt.Sprintf(format, args...)))
}

func (f *fakeRecorder) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

// withRecorder gives the env's manager a fake recorder.
func (e *testEnv) withRecorder() *fakeRecorder {
	r := &fakeRecorder{}
	e.m.SetEventRecorder(r)
	return r
}
