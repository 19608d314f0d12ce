package shutdown

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeTrigger is a Trigger the test fires.
type fakeTrigger struct {
	ch       chan bool
	err      error
	released chan struct{}
}

func newFakeTrigger() *fakeTrigger {
	return &fakeTrigger{ch: make(chan bool), released: make(chan struct{}, 4)}
}

func (f *fakeTrigger) Watch(context.Context) (<-chan bool, error) {
	if f.err != nil {
		return nil, f.err
	}
	return f.ch, nil
}

func (f *fakeTrigger) Release() error {
	f.released <- struct{}{}
	return nil
}

// kill is one KillPod call; the test ends it with finish.
type kill struct {
	pod    *corev1.Pod
	grace  int64
	at     time.Time
	status func(*corev1.PodStatus)
	finish chan struct{}
}

// fakeKiller records kills and blocks each until the test finishes it or
// ctx ends.
type fakeKiller struct {
	clk   *clocktesting.FakeClock
	calls chan *kill
}

func (k *fakeKiller) KillPod(ctx context.Context, pod *corev1.Pod, grace int64, status func(*corev1.PodStatus)) error {
	c := &kill{pod: pod, grace: grace, at: k.clk.Now(), status: status, finish: make(chan struct{})}
	k.calls <- c
	select {
	case <-c.finish:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type fakePods []*corev1.Pod

func (p fakePods) ActivePods() []*corev1.Pod { return p }

type fakeEvents struct {
	mu      sync.Mutex
	reasons []string
}

func (e *fakeEvents) Eventf(_ apiruntime.Object, eventType, reason, format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reasons = append(e.reasons, eventType+" "+reason+" "+fmt.Sprintf(format, args...))
}

func (e *fakeEvents) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.reasons...)
}

func pod(name string, priority *int32, grace *int64) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name), Generation: 3},
		Spec:       corev1.PodSpec{Priority: priority, TerminationGracePeriodSeconds: grace},
	}
}

func i32(v int32) *int32 { return &v }
func i64(v int64) *int64 { return &v }

// next is the next kill, failing after a generous deadline.
func next(t *testing.T, calls <-chan *kill) *kill {
	t.Helper()
	select {
	case c := <-calls:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no KillPod call")
		return nil
	}
}

// none checks that no kill is pending.
func none(t *testing.T, calls <-chan *kill, when string) {
	t.Helper()
	select {
	case c := <-calls:
		t.Fatalf("%s: unexpected kill of %s", when, c.pod.Name)
	default:
	}
}

// waitTimer returns once the manager waits on the fake clock.
func waitTimer(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("the manager never waited on the clock")
		}
		runtime.Gosched()
	}
}
