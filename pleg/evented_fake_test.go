package pleg

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	testingclock "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// fakeDecoder reads the events the tests build: sandboxes labelled
// owner=me are ours.
type fakeDecoder struct{}

func (fakeDecoder) PodStatusFromEvent(ev *runtimeapi.ContainerEventResponse) (*noderuntime.PodStatus, bool) {
	sb := ev.GetPodSandboxStatus()
	if sb == nil || sb.GetLabels()["owner"] != "me" {
		return nil, false
	}
	md := sb.GetMetadata()
	s := &noderuntime.PodStatus{ID: types.UID(md.GetUid()), Name: md.GetName(), Namespace: md.GetNamespace(),
		SandboxStatuses: []*runtimeapi.PodSandboxStatus{sb}}
	if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
		s.IPs = []string{"10.0.0.1"}
	}
	for _, c := range ev.GetContainersStatuses() {
		state := noderuntime.ContainerStateCreated
		switch c.GetState() {
		case runtimeapi.ContainerState_CONTAINER_RUNNING:
			state = noderuntime.ContainerStateRunning
		case runtimeapi.ContainerState_CONTAINER_EXITED:
			state = noderuntime.ContainerStateExited
		}
		s.ContainerStatuses = append(s.ContainerStatuses, &noderuntime.ContainerStatus{
			ID: noderuntime.ContainerID{Type: "fake", ID: c.GetId()}, Name: c.GetMetadata().GetName(), State: state,
			CreatedAt: fromNanos(c.GetCreatedAt()), StartedAt: fromNanos(c.GetStartedAt()), FinishedAt: fromNanos(c.GetFinishedAt()),
			SandboxID: sb.GetId(),
		})
	}
	return s, true
}

// fakeCtr is a container in a test event's snapshot.
type fakeCtr struct {
	id                         string
	state                      runtimeapi.ContainerState
	created, started, finished time.Time
}

// fakeSnap is a test event's sandbox and containers.
type fakeSnap struct {
	uid, sandbox string
	ready        bool
	foreign      bool
	created      time.Time
	ctrs         []fakeCtr
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// event builds a container event about id with the snapshot s, sent at at.
func event(typ runtimeapi.ContainerEventType, id string, s *fakeSnap, at time.Time) *runtimeapi.ContainerEventResponse {
	ev := &runtimeapi.ContainerEventResponse{ContainerId: id, ContainerEventType: typ, CreatedAt: nanos(at)}
	if s == nil {
		return ev
	}
	owner := "me"
	if s.foreign {
		owner = "someone-else"
	}
	state := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	if s.ready {
		state = runtimeapi.PodSandboxState_SANDBOX_READY
	}
	ev.PodSandboxStatus = &runtimeapi.PodSandboxStatus{
		Id: s.sandbox, State: state, CreatedAt: nanos(s.created), Labels: map[string]string{"owner": owner},
		Metadata: &runtimeapi.PodSandboxMetadata{Uid: s.uid, Name: "pod-" + s.uid, Namespace: "default"},
	}
	for _, c := range s.ctrs {
		ev.ContainersStatuses = append(ev.ContainersStatuses, &runtimeapi.ContainerStatus{
			Id: c.id, State: c.state, Metadata: &runtimeapi.ContainerMetadata{Name: "c-" + c.id},
			CreatedAt: nanos(c.created), StartedAt: nanos(c.started), FinishedAt: nanos(c.finished),
		})
	}
	return ev
}

const (
	evCreated = runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT
	evStarted = runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT
	evStopped = runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT
	evDeleted = runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT
	criRun    = runtimeapi.ContainerState_CONTAINER_RUNNING
	criExit   = runtimeapi.ContainerState_CONTAINER_EXITED
	criNew    = runtimeapi.ContainerState_CONTAINER_CREATED
)

// fakeSource is a scripted event stream: the next failNext attempts fail
// at once; an open stream forwards what send gives it until cut.
type fakeSource struct {
	mu       sync.Mutex
	failNext int
	attempts int
	open     bool
	cutCh    chan struct{}
	feed     chan *runtimeapi.ContainerEventResponse
}

func newFakeSource() *fakeSource {
	return &fakeSource{feed: make(chan *runtimeapi.ContainerEventResponse)}
}

func (f *fakeSource) GetContainerEvents(ctx context.Context, ch chan *runtimeapi.ContainerEventResponse, cb func(runtimeapi.RuntimeService_GetContainerEventsClient)) error {
	f.mu.Lock()
	f.attempts++
	if f.failNext > 0 {
		f.failNext--
		f.mu.Unlock()
		return errors.New("connection refused")
	}
	cut := make(chan struct{})
	f.cutCh, f.open = cut, true
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.open = false
		f.mu.Unlock()
	}()
	cb(nil)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-cut:
			return errors.New("stream cut")
		case ev := <-f.feed:
			select {
			case ch <- ev:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

func (f *fakeSource) setFailNext(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failNext = n
}

func (f *fakeSource) isOpen() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.open
}

func (f *fakeSource) cut() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.cutCh)
}

func (f *fakeSource) tries() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attempts
}

// newTestEvented returns an Evented over a fake source, runtime, decoder,
// clock and cache.
func newTestEvented(t *testing.T, cfg Config) (*Evented, *fakeSource, *fakeRuntime, *testingclock.FakeClock, *Cache) {
	t.Helper()
	src, rt := newFakeSource(), newFakeRuntime()
	clk := testingclock.NewFakeClock(epoch)
	cache := NewCache(clk)
	return NewEvented(src, rt, fakeDecoder{}, cache, clk, nil, testr.New(t), cfg), src, rt, clk, cache
}

// eventually yields until cond holds, failing after 10s of real time.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		runtime.Gosched()
	}
}

// runEvented runs e until the test ends.
func runEvented(t *testing.T, e *Evented) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v, want nil", err)
		}
	})
}
