package podworkers

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// failsafe bounds every wait of a test on the workers; tests never sleep.
const failsafe = 10 * time.Second

// Names of the SyncHandler methods, as calls record them.
const (
	kindSync        = "SyncPod"
	kindTerminating = "SyncTerminatingPod"
	kindRuntime     = "SyncTerminatingRuntimePod"
	kindTerminated  = "SyncTerminatedPod"
)

// call is one SyncHandler call, held until the test replies.
type call struct {
	kind       string
	uid        types.UID
	updateType UpdateType
	pod        *corev1.Pod
	mirror     *corev1.Pod
	runningPod *noderuntime.Pod
	status     *noderuntime.PodStatus
	grace      int64 // -1 when nil
	statusFn   func(*corev1.PodStatus)
	ctx        context.Context
	reply      chan result
}

type result struct {
	terminal bool
	err      error
	panicMsg string
}

func (c *call) ok()               { c.reply <- result{} }
func (c *call) fail(err error)    { c.reply <- result{err: err} }
func (c *call) terminalPhase()    { c.reply <- result{terminal: true} }
func (c *call) panics(msg string) { c.reply <- result{panicMsg: msg} }
func (c *call) generation() int64 { return c.pod.Generation }

// fakeHandler hands every call to the test and blocks until the test
// replies or the sync's context ends (then it returns the context's error).
type fakeHandler struct {
	calls chan *call
	// ignoreCancel makes held calls wait for the reply even once their
	// context is cancelled, as a slow handler would.
	ignoreCancel atomic.Bool
}

func newFakeHandler() *fakeHandler { return &fakeHandler{calls: make(chan *call)} }

func (h *fakeHandler) do(ctx context.Context, c *call) result {
	c.ctx = ctx
	c.reply = make(chan result, 1)
	select {
	case h.calls <- c:
	case <-ctx.Done():
		return result{err: ctx.Err()}
	}
	if h.ignoreCancel.Load() {
		return <-c.reply
	}
	select {
	case r := <-c.reply:
		return r
	case <-ctx.Done():
		return result{err: ctx.Err()}
	}
}

func (h *fakeHandler) SyncPod(ctx context.Context, t UpdateType, pod, mirror *corev1.Pod, status *noderuntime.PodStatus) (bool, error) {
	r := h.do(ctx, &call{kind: kindSync, uid: pod.UID, updateType: t, pod: pod, mirror: mirror, status: status, grace: -1})
	if r.panicMsg != "" {
		panic(r.panicMsg)
	}
	return r.terminal, r.err
}

func (h *fakeHandler) SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, status *noderuntime.PodStatus, grace *int64, fn func(*corev1.PodStatus)) error {
	c := &call{kind: kindTerminating, uid: pod.UID, pod: pod, status: status, grace: -1, statusFn: fn}
	if grace != nil {
		c.grace = *grace
	}
	return h.do(ctx, c).err
}

func (h *fakeHandler) SyncTerminatingRuntimePod(ctx context.Context, rp *noderuntime.Pod) error {
	return h.do(ctx, &call{kind: kindRuntime, uid: rp.ID, runningPod: rp, grace: -1}).err
}

func (h *fakeHandler) SyncTerminatedPod(ctx context.Context, pod *corev1.Pod, status *noderuntime.PodStatus) error {
	return h.do(ctx, &call{kind: kindTerminated, uid: pod.UID, pod: pod, status: status, grace: -1}).err
}

// fakeCache answers GetNewerThan at once with a status stamped minTime, or,
// once hold is set, tells waiting and blocks until hold is closed.
type fakeCache struct {
	mu      sync.Mutex
	asked   []cacheCall
	hold    chan struct{}
	waiting chan types.UID
}

type cacheCall struct {
	uid     types.UID
	minTime time.Time
}

func (c *fakeCache) GetNewerThan(ctx context.Context, uid types.UID, minTime time.Time) (*noderuntime.PodStatus, error) {
	c.mu.Lock()
	c.asked = append(c.asked, cacheCall{uid, minTime})
	hold, waiting := c.hold, c.waiting
	c.mu.Unlock()
	if hold != nil {
		select {
		case waiting <- uid:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &noderuntime.PodStatus{ID: uid, TimeStamp: minTime.Add(time.Nanosecond)}, nil
}

// holdNext makes the next GetNewerThan calls block until release is called.
func (c *fakeCache) holdNext() (release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hold, c.waiting = make(chan struct{}), make(chan types.UID)
	hold := c.hold
	return func() {
		c.mu.Lock()
		c.hold = nil
		c.mu.Unlock()
		close(hold)
	}
}

func (c *fakeCache) calls() []cacheCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]cacheCall(nil), c.asked...)
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// harness is a PodWorkers wired to fakes.
type harness struct {
	t     *testing.T
	pw    *PodWorkers
	h     *fakeHandler
	cache *fakeCache
	clk   *testingclock.FakeClock
	q     *WorkQueue
	exits chan types.UID
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	hs := &harness{
		t:     t,
		h:     newFakeHandler(),
		cache: &fakeCache{},
		clk:   testingclock.NewFakeClock(t0),
		exits: make(chan types.UID, 100),
	}
	hs.q = NewWorkQueue(hs.clk)
	log := testr.NewWithOptions(t, testr.Options{Verbosity: 4})
	hs.pw = New(hs.h, hs.cache, hs.q, hs.clk, nil, log, cfg)
	hs.pw.testHookExit = func(uid types.UID) { hs.exits <- uid }
	return hs
}

// run runs the workers until the test ends.
func (hs *harness) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- hs.pw.Run(ctx) }()
	hs.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				hs.t.Errorf("Run() = %v, want nil", err)
			}
		case <-time.After(failsafe):
			hs.t.Errorf("Run did not return after its context ended")
		}
	})
}

// next returns the next handler call.
func (hs *harness) next() *call {
	hs.t.Helper()
	select {
	case c := <-hs.h.calls:
		return c
	case <-time.After(failsafe):
		hs.t.Fatalf("no handler call within %v", failsafe)
		return nil
	}
}

// expect returns the next handler call and checks its method and pod.
func (hs *harness) expect(kind string, uid types.UID) *call {
	hs.t.Helper()
	c := hs.next()
	if c.kind != kind || c.uid != uid {
		hs.t.Fatalf("handler call = %s(%s), want %s(%s)", c.kind, c.uid, kind, uid)
	}
	return c
}

// waitExit waits until uid's worker goroutine exits.
func (hs *harness) waitExit(uid types.UID) {
	hs.t.Helper()
	select {
	case got := <-hs.exits:
		if got != uid {
			hs.t.Fatalf("worker of %s exited, want %s", got, uid)
		}
	case <-time.After(failsafe):
		hs.t.Fatalf("worker of %s did not exit within %v", uid, failsafe)
	}
}

func (hs *harness) update(t UpdateType, pod *corev1.Pod) {
	hs.pw.UpdatePod(UpdatePodOptions{UpdateType: t, Pod: pod})
}

func (hs *harness) kill(pod *corev1.Pod, kill *KillPodOptions) {
	hs.pw.UpdatePod(UpdatePodOptions{UpdateType: SyncPodKill, Pod: pod, KillPodOptions: kill})
}

// finish drives a running pod whose SyncPod call c is held to finished with
// a kill.
func (hs *harness) finish(c *call, pod *corev1.Pod) {
	hs.t.Helper()
	hs.kill(pod, nil)
	c.ok()
	hs.expect(kindTerminating, pod.UID).ok()
	hs.expect(kindTerminated, pod.UID).ok()
	hs.waitExit(pod.UID)
}

// newPod returns a pod with a 30s grace period; gen tells versions apart.
func newPod(uid string, gen int64) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-" + uid, Namespace: "ns", UID: types.UID(uid), Generation: gen},
		Spec:       corev1.PodSpec{TerminationGracePeriodSeconds: ptr(int64(30))},
	}
}

func deleted(pod *corev1.Pod, grace int64) *corev1.Pod {
	pod = pod.DeepCopy()
	now := metav1.NewTime(t0)
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &now, &grace
	return pod
}

func ptr[T any](v T) *T { return &v }

// due steps the clock by d and reports whether uid is then due in the queue.
func (hs *harness) due(uid types.UID, d time.Duration) bool {
	hs.clk.Step(d)
	for _, got := range hs.q.GetWork() {
		if got == uid {
			return true
		}
	}
	return false
}
