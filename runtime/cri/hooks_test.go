package cri

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestHookRunnerRunsEachHandler(t *testing.T) {
	var gotPath, gotHost, gotUA string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotHost, gotUA = r.URL.Path, r.Host, r.UserAgent()
		w.WriteHeader(http.StatusInternalServerError) // any answer succeeds, as in the kubelet
	}))
	defer srv.Close()
	_, portStr, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)
	closed := freeLocalPort(t)

	e := newTestEnv(t)
	e.withExec(func(_ context.Context, _ string, cmd []string) error {
		if cmd[0] == "false" {
			return errors.New("command terminated with exit code 1")
		}
		return nil
	})
	pod := newPod("u1", "a")
	c := &pod.Spec.Containers[0]
	c.Ports = []corev1.ContainerPort{{Name: "web", ContainerPort: int32(port)}}
	host := func(context.Context) (string, error) { return "127.0.0.1", nil }
	cases := []struct {
		name    string
		handler corev1.LifecycleHandler
		wantMsg string // substring of the failure message; "" for success
	}{
		{name: "an exec hook that exits 0 succeeds", handler: corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}},
		{name: "an exec hook that fails reports its command and output",
			handler: corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"false"}}},
			wantMsg: `Exec lifecycle hook ([false]) for Container "a" in Pod "web-u1_default(u1)" failed - error: command terminated with exit code 1, message: "out"`},
		{name: "an httpGet hook to a named port succeeds whatever the status code",
			handler: corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/hook", Port: intstr.FromString("web"),
				HTTPHeaders: []corev1.HTTPHeader{{Name: "Host", Value: "example.test"}}}}},
		{name: "an httpGet hook to a closed port fails",
			handler: corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/x", Port: intstr.FromInt32(int32(closed))}},
			wantMsg: `HTTP lifecycle hook (/x) for Container "a" in Pod "web-u1_default(u1)" failed - error:`},
		{name: "an httpGet hook to an unknown port name fails",
			handler: corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/x", Port: intstr.FromString("nope")}},
			wantMsg: `couldn't find port "nope"`},
		{name: "a sleep of zero seconds returns at once", handler: corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 0}}},
		{name: "a tcpSocket hook is not supported",
			handler: corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}},
			wantMsg: "Cannot run handler: invalid handler"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := e.m.hooks.run(context.Background(), pod, c, noderuntime.ContainerID{Type: "fake", ID: "a-id"}, &tt.handler, host)
			if (err != nil) != (tt.wantMsg != "") || !strings.Contains(msg, tt.wantMsg) {
				t.Fatalf("run = %q, %v; want message containing %q", msg, err, tt.wantMsg)
			}
		})
	}
	if gotPath != "/hook" || gotHost != "example.test" || gotUA != hookUserAgent {
		t.Errorf("httpGet request: path %q host %q user agent %q", gotPath, gotHost, gotUA)
	}
}

func TestSleepHookWaitsOnTheClockAndEndsWithItsContext(t *testing.T) {
	e := newTestEnv(t)
	done := make(chan error, 1)
	go func() { done <- e.m.hooks.sleep(context.Background(), 5*time.Second) }()
	waitFor(t, "the sleep to wait on the clock", e.clk.HasWaiters)
	e.clk.Step(5 * time.Second)
	if err := <-done; err != nil {
		t.Fatalf("sleep = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- e.m.hooks.sleep(ctx, time.Hour) }()
	waitFor(t, "the sleep to wait on the clock", e.clk.HasWaiters)
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "terminated before sleep hook finished") {
		t.Fatalf("cut sleep = %v", err)
	}
}

func TestFailingPostStartKillsTheContainerAndFailsItsStart(t *testing.T) {
	e := newTestEnv(t)
	rec := e.withRecorder()
	e.withExec(func(context.Context, string, []string) error { return errors.New("exit code 2") })
	pod := newPod("u1", "a")
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{"setup"}}}}
	result := e.sync(t, pod)
	step, ok := failedSteps(result)["StartContainer/a"]
	if !ok || !errors.Is(step.Err, ErrPostStartHook) {
		t.Fatalf("steps %+v, want a failed start with ErrPostStartHook", result.Steps)
	}
	if reason, msg := result.Waiting("a"); reason != "PostStartHookError" || !strings.Contains(msg, "Exec lifecycle hook ([setup])") {
		t.Fatalf("waiting = %q %q", reason, msg)
	}
	if order, _ := e.rs.stops(); !slices.Equal(order, []string{"a"}) {
		t.Fatalf("stopped %v, want the container killed", order)
	}
	events := rec.list()
	for _, want := range []string{
		"Normal Started spec.containers{a}: Started container a",
		"Warning FailedPostStartHook spec.containers{a}: PostStartHook failed",
		"Normal Killing spec.containers{a}: FailedPostStartHook",
	} {
		if !slices.Contains(events, want) {
			t.Errorf("events %q lack %q", events, want)
		}
	}
}

func TestPostStartRunsRightAfterTheStart(t *testing.T) {
	e := newTestEnv(t)
	x := e.withExec(nil)
	pod := newPod("u1", "a")
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{"setup", "now"}}}}
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	if calls := x.execCalls(); len(calls) != 1 || !slices.Equal(calls[0], []string{"setup", "now"}) {
		t.Fatalf("exec calls %v", calls)
	}
	if cs := e.status(t, pod).FindContainerStatusByName("a"); cs == nil || cs.State != noderuntime.ContainerStateRunning {
		t.Fatalf("container after postStart: %+v", cs)
	}
}

func TestBuiltinPreStopRunsBeforeTheStop(t *testing.T) {
	e := newTestEnv(t)
	var order []string
	x := e.withExec(func(context.Context, string, []string) error { order = append(order, "preStop"); return nil })
	e.rs.onStop = func(name string) { order = append(order, "stop "+name) }
	pod := newPod("u1", "a")
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{"drain"}}}}
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	if err := e.m.KillPod(context.Background(), pod, e.status(t, pod).ToPod(), nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, []string{"preStop", "stop a"}) || len(x.execCalls()) != 1 {
		t.Fatalf("order %v, exec calls %v", order, x.execCalls())
	}
}

func TestHangingPreStopIsCutAtTheGracePeriodAndTheContainerGetsTheMinimum(t *testing.T) {
	e := newTestEnv(t)
	rec := e.withRecorder()
	hookCtx := make(chan context.Context, 1)
	e.withExec(func(ctx context.Context, _ string, _ []string) error {
		hookCtx <- ctx
		<-ctx.Done()
		return ctx.Err()
	})
	pod := newPod("u1", "a")
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{"sleep", "3600"}}}}
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	running := e.status(t, pod).ToPod()
	done := make(chan error, 1)
	go func() { done <- e.m.KillPod(context.Background(), pod, running, ptr(int64(10))) }()
	ctx := <-hookCtx
	waitFor(t, "the hook timer", e.clk.HasWaiters)
	e.clk.Step(10 * time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, timeouts := e.rs.stops(); timeouts["a"] != 2 {
		t.Fatalf("a stopped with %ds, want the 2s minimum", timeouts["a"])
	}
	if ctx.Err() == nil {
		t.Fatal("the hanging hook was not cancelled")
	}
	if events := rec.list(); !slices.Contains(events, "Normal Killing spec.containers{a}: Stopping container a") {
		t.Fatalf("events %q lack the Killing event", events)
	}
}

// freeLocalPort returns a port nothing listens on.
func freeLocalPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}
