package prober

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
	goruntime "runtime"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	podUID types.UID = "uid-1"
	ctrID            = "containerd://c1"
	ctrID2           = "containerd://c2"
)

// execCall is one call of fakeExec.
type execCall struct {
	id      string
	cmd     []string
	timeout time.Duration
}

// fakeExec is an ExecRunner that answers from a queue of results, then
// with exit code 0.
type fakeExec struct {
	mu      sync.Mutex
	calls   []execCall
	results []execResult
}

type execResult struct {
	out  string
	code int
	err  error
}

func (f *fakeExec) ExecSync(_ context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, execCall{id: id, cmd: cmd, timeout: timeout})
	if len(f.results) == 0 {
		return nil, nil, 0, nil
	}
	r := f.results[0]
	f.results = f.results[1:]
	return []byte(r.out), nil, r.code, r.err
}

// queue appends results for the next calls.
func (f *fakeExec) queue(rs ...execResult) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.results = append(f.results, rs...)
}

func (f *fakeExec) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// fakeRecorder keeps events as "type reason fieldPath message".
type fakeRecorder struct {
	mu     sync.Mutex
	events []string
}

func (r *fakeRecorder) Eventf(object runtime.Object, eventType, reason, messageFmt string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref := object.(*corev1.ObjectReference)
	r.events = append(r.events, fmt.Sprintf("%s %s %s %s", eventType, reason, ref.FieldPath, fmt.Sprintf(messageFmt, args...)))
}

func (r *fakeRecorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// env is a Prober with fakes around it.
type env struct {
	p    *Prober
	clk  *testingclock.FakeClock
	exec *fakeExec
	rec  *fakeRecorder
	reg  *prometheus.Registry
}

func newEnv(t testing.TB, cfg Config) *env {
	t.Helper()
	if cfg.UpdateBuffer == 0 {
		cfg.UpdateBuffer = 1000
	}
	if cfg.Seed == 0 {
		cfg.Seed = 42
	}
	e := &env{
		clk:  testingclock.NewFakeClock(epoch),
		exec: &fakeExec{},
		rec:  &fakeRecorder{},
		reg:  prometheus.NewRegistry(),
	}
	e.p = New(e.exec, e.clk, e.reg, e.rec, logr.Discard(), cfg)
	return e
}

// worker returns the worker of a probe of the test pod.
func (e *env) worker(t testing.TB, container string, pt ProbeType) *worker {
	t.Helper()
	w, ok := e.p.getWorker(podUID, container, pt)
	if !ok {
		t.Fatalf("no %v worker for container %q", pt, container)
	}
	return w
}

func newPod(containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: podUID},
		Spec:       corev1.PodSpec{Containers: containers, RestartPolicy: corev1.RestartPolicyAlways},
	}
}

func execProbe(mods ...func(*corev1.Probe)) *corev1.Probe {
	p := &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"check"}}},
		PeriodSeconds:    10,
		TimeoutSeconds:   1,
		SuccessThreshold: 1,
		FailureThreshold: 3,
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func running(name, id string, startedAt time.Time) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: name, ContainerID: id,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(startedAt)}},
	}
}

func terminated(name, id string, code int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: name, ContainerID: id,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}},
	}
}

func podStatus(statuses ...corev1.ContainerStatus) *corev1.PodStatus {
	return &corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "127.0.0.1", ContainerStatuses: statuses}
}

func ptr[T any](v T) *T { return &v }

func runtimeGosched() { goruntime.Gosched() }
