package agent

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/go-logr/logr/testr"

	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/sources"
)

type fakeConfig struct {
	updates chan sources.PodUpdate
	seen    atomic.Bool
	err     error
}

func (f *fakeConfig) Run(ctx context.Context) error {
	if f.err != nil {
		return f.err
	}
	<-ctx.Done()
	return nil
}
func (f *fakeConfig) Updates() <-chan sources.PodUpdate { return f.updates }
func (f *fakeConfig) SeenAllSources() bool              { return f.seen.Load() }

type fakePLEG struct{ events chan *pleg.Event }

func (f *fakePLEG) Run(ctx context.Context) error { <-ctx.Done(); return nil }
func (f *fakePLEG) Watch() <-chan *pleg.Event     { return f.events }
func (f *fakePLEG) Healthy() (bool, error)        { return true, nil }

// fakeWorkers records every UpdatePod on a channel.
type fakeWorkers struct {
	calls   chan podworkers.UpdatePodOptions
	mu      sync.Mutex
	running map[types.UID]bool // CouldHaveRunningContainers
	known   map[types.UID]podworkers.PodWorkerSync
	killed  map[types.UID]bool // IsPodTerminationRequested: a SyncPodKill came
}

func newFakeWorkers() *fakeWorkers {
	return &fakeWorkers{calls: make(chan podworkers.UpdatePodOptions, 100),
		running: map[types.UID]bool{}, known: map[types.UID]podworkers.PodWorkerSync{}, killed: map[types.UID]bool{}}
}

func (f *fakeWorkers) Run(ctx context.Context) error { <-ctx.Done(); return nil }
func (f *fakeWorkers) UpdatePod(o podworkers.UpdatePodOptions) {
	f.mu.Lock()
	if o.Pod != nil && o.UpdateType != podworkers.SyncPodKill {
		f.known[o.Pod.UID] = podworkers.PodWorkerSync{HasConfig: true}
	}
	if o.Pod != nil && o.UpdateType == podworkers.SyncPodKill {
		f.killed[o.Pod.UID] = true
	}
	f.mu.Unlock()
	f.calls <- o
}
func (f *fakeWorkers) SyncKnownPods([]*corev1.Pod) map[types.UID]podworkers.PodWorkerSync {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[types.UID]podworkers.PodWorkerSync{}
	for k, v := range f.known {
		out[k] = v
	}
	return out
}
func (f *fakeWorkers) IsPodKnownTerminated(types.UID) bool { return false }
func (f *fakeWorkers) CouldHaveRunningContainers(uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.running[uid]
}
func (f *fakeWorkers) IsPodTerminationRequested(uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.killed[uid]
}

func (f *fakeWorkers) setRunning(uid types.UID, v bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running[uid] = v
}

type fakeQueue struct {
	mu  sync.Mutex
	due []types.UID
}

func (q *fakeQueue) GetWork() []types.UID {
	q.mu.Lock()
	defer q.mu.Unlock()
	d := q.due
	q.due = nil
	return d
}

// fakeRuntime answers Status and GetPods; the rest is unused by the loop.
// While hung, Status and GetPods block until their context ends or the
// hang is released, as a SIGSTOPped runtime does.
type fakeRuntime struct {
	mu        sync.Mutex
	pods      []*noderuntime.Pod
	statusErr error
	// netDown, when set, is the NetworkMessage of a not-ready network.
	netDown  string
	hung     chan struct{} // nil: answers at once
	blocked  atomic.Int32  // calls blocked in the hang now
	listings atomic.Int32  // GetPods calls
}

// hang makes Status and GetPods block from now on.
func (r *fakeRuntime) hang() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hung = make(chan struct{})
}

// release ends the hang: blocked calls and later ones answer.
func (r *fakeRuntime) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hung != nil {
		close(r.hung)
		r.hung = nil
	}
}

// wait blocks while the runtime hangs; it returns ctx's error if ctx ended
// first.
func (r *fakeRuntime) wait(ctx context.Context) error {
	r.mu.Lock()
	h := r.hung
	r.mu.Unlock()
	if h == nil {
		return nil
	}
	r.blocked.Add(1)
	defer r.blocked.Add(-1)
	select {
	case <-h:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *fakeRuntime) Type() string { return "fake" }
func (r *fakeRuntime) Version(context.Context) (*noderuntime.VersionInfo, error) {
	return &noderuntime.VersionInfo{RuntimeName: "fake"}, nil
}
func (r *fakeRuntime) Status(ctx context.Context) (*noderuntime.RuntimeStatus, error) {
	if err := r.wait(ctx); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.statusErr != nil {
		return nil, r.statusErr
	}
	return &noderuntime.RuntimeStatus{Ready: true, NetworkReady: r.netDown == "", NetworkMessage: r.netDown}, nil
}
func (r *fakeRuntime) GetPods(ctx context.Context, _ bool) ([]*noderuntime.Pod, error) {
	r.listings.Add(1)
	if err := r.wait(ctx); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pods, nil
}
func (r *fakeRuntime) GetPodStatus(_ context.Context, uid types.UID, _, _ string) (*noderuntime.PodStatus, error) {
	return &noderuntime.PodStatus{ID: uid}, nil
}
func (r *fakeRuntime) SyncPod(context.Context, *corev1.Pod, *noderuntime.PodStatus) *noderuntime.SyncResult {
	return &noderuntime.SyncResult{}
}
func (r *fakeRuntime) KillPod(context.Context, *corev1.Pod, *noderuntime.Pod, *int64) error {
	return nil
}

// loopTest runs an Agent over fakes with a fake clock.
type loopTest struct {
	t       *testing.T
	clk     *testingclock.FakeClock
	config  *fakeConfig
	workers *fakeWorkers
	queue   *fakeQueue
	rt      *fakeRuntime
	agent   *Agent
	done    chan error
	cancel  context.CancelFunc
}

func newLoopTest(t *testing.T, cfg Config) *loopTest {
	t.Helper()
	lt := &loopTest{
		t: t, clk: testingclock.NewFakeClock(t0),
		config:  &fakeConfig{updates: make(chan sources.PodUpdate, 10)},
		workers: newFakeWorkers(), queue: &fakeQueue{}, rt: &fakeRuntime{},
		done: make(chan error, 1),
	}
	if cfg.NodeName == "" {
		cfg.NodeName = "node-a"
	}
	lt.agent = New(Deps{
		Config: lt.config, PLEG: &fakePLEG{events: make(chan *pleg.Event, 10)}, Workers: lt.workers,
		Queue: lt.queue, Runtime: lt.rt, Statuses: NewMemoryStatuses(), Registry: NewRegistry(),
	}, lt.clk, testr.New(t), cfg)
	return lt
}

func (lt *loopTest) start() {
	ctx, cancel := context.WithCancel(context.Background())
	lt.cancel = cancel
	go func() { lt.done <- lt.agent.Run(ctx) }()
	lt.t.Cleanup(lt.stop)
	// The loop has started once its two tickers and the runtime check's
	// ticker wait on the clock, after the first runtime check (whose
	// timeout timer is gone then): a step of the clock reaches each ticker.
	lt.waitFor("the first runtime check", func() bool { return lt.agent.runtime.check() != errNotReady })
	lt.waitFor("the sync loop to start", func() bool { return lt.clk.Waiters() == 3 })
}

func (lt *loopTest) stop() {
	if lt.cancel == nil {
		return
	}
	lt.cancel()
	lt.cancel = nil
	if err := <-lt.done; err != nil {
		lt.t.Errorf("Run: %v", err)
	}
}

// waitFor spins until cond holds; the deadline only guards against a hang.
func (lt *loopTest) waitFor(what string, cond func() bool) {
	lt.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			lt.t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}

// waitHousekeepings waits until n housekeeping passes have finished.
func (lt *loopTest) waitHousekeepings(n uint64) {
	lt.t.Helper()
	lt.waitFor(fmt.Sprintf("housekeeping pass %d", n), func() bool { return lt.agent.housekeepings.Load() >= n })
}

// nextCall returns the next UpdatePod call.
func (lt *loopTest) nextCall() podworkers.UpdatePodOptions {
	lt.t.Helper()
	select {
	case c := <-lt.workers.calls:
		return c
	case <-time.After(10 * time.Second):
		lt.t.Fatal("no UpdatePod call")
	}
	return podworkers.UpdatePodOptions{}
}

// noCall fails if an UpdatePod call is pending after the loop handled a
// marker: a round trip through the updates channel.
func (lt *loopTest) noCall() {
	lt.t.Helper()
	lt.config.updates <- sources.PodUpdate{Op: sources.RECONCILE}
	lt.waitFor("the loop to drain its updates", func() bool { return len(lt.config.updates) == 0 })
	lt.config.updates <- sources.PodUpdate{Op: sources.RECONCILE}
	lt.waitFor("the loop to drain its updates", func() bool { return len(lt.config.updates) == 0 })
	select {
	case c := <-lt.workers.calls:
		lt.t.Fatalf("unexpected UpdatePod %s for %v", c.UpdateType, c.Pod)
	default:
	}
}

func staticPod(uid, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: name, Namespace: "default",
		Annotations: map[string]string{sources.AnnotationSource: sources.FileSource}}}
}

var errBoom = errors.New("boom")
