package cri

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// blockingStarts is a runtime whose start calls block until proceed
// receives, counting the calls inside it.
type blockingStarts struct {
	criapi.RuntimeService
	proceed chan struct{}
	entered chan string

	mu            sync.Mutex
	inside, peak  int
	stopped, runs int
}

func newBlockingStarts() *blockingStarts {
	return &blockingStarts{proceed: make(chan struct{}), entered: make(chan string, 100)}
}

func (b *blockingStarts) call(name string) {
	b.mu.Lock()
	b.inside++
	b.runs++
	b.peak = max(b.peak, b.inside)
	b.mu.Unlock()
	b.entered <- name
	<-b.proceed
	b.mu.Lock()
	b.inside--
	b.mu.Unlock()
}

func (b *blockingStarts) RunPodSandbox(_ context.Context, c *runtimeapi.PodSandboxConfig, _ string) (string, error) {
	b.call("sandbox " + c.GetMetadata().GetName())
	return "sb", nil
}

func (b *blockingStarts) CreateContainer(_ context.Context, _ string, c *runtimeapi.ContainerConfig, _ *runtimeapi.PodSandboxConfig) (string, error) {
	b.call("create " + c.GetMetadata().GetName())
	return "c", nil
}

func (b *blockingStarts) StartContainer(_ context.Context, id string) error {
	b.call("start " + id)
	return nil
}

func (b *blockingStarts) StopContainer(context.Context, string, int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped++
	return nil
}

// queued is how many calls wait for a slot.
func (s *startSlots) queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, q := range s.waiting {
		n += len(q)
	}
	return n
}

// waitQueued yields until n calls wait at s, failing the test after a
// generous deadline.
func waitQueued(t *testing.T, s *startSlots, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for s.queued() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls wait for a start slot, want %d", s.queued(), n)
		}
		runtime.Gosched()
	}
}

func TestLimitStartsBoundsCallsInFlight(t *testing.T) {
	b := newBlockingStarts()
	l := LimitStarts(b, 3, clock.RealClock{}, nil, logr.Discard()).(*limitedStarts)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			ctx := context.Background()
			switch i % 3 {
			case 0:
				_, _ = l.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p"}}, "")
			case 1:
				_, _ = l.CreateContainer(ctx, "sb", &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "c"}}, nil)
			default:
				_ = l.StartContainer(ctx, "c")
			}
		})
	}
	for range 3 {
		<-b.entered
	}
	waitQueued(t, l.slots, 7)
	if err := l.StopContainer(context.Background(), "other", 0); err != nil || b.stopped != 1 {
		t.Fatalf("a stop with every start slot taken: err %v, stops seen %d; want it to pass straight through", err, b.stopped)
	}
	for range 7 {
		b.proceed <- struct{}{}
		<-b.entered
	}
	for range 3 {
		b.proceed <- struct{}{}
	}
	wg.Wait()
	if b.peak != 3 || b.runs != 10 {
		t.Fatalf("peak %d start calls in the runtime of %d; want 3 of 10", b.peak, b.runs)
	}
}

func TestLimitStartsServesLaterStagesFirst(t *testing.T) {
	s := newStartSlots(1)
	if _, err := s.acquire(context.Background(), stageSandbox); err != nil {
		t.Fatal(err)
	}
	order := make(chan int, stageCount)
	for i, stage := range []int{stageSandbox, stageStart, stageCreate} {
		go func() {
			if _, err := s.acquire(context.Background(), stage); err != nil {
				t.Error(err)
			}
			order <- stage
			s.release()
		}()
		waitQueued(t, s, i+1)
	}
	s.release()
	for _, want := range []int{stageStart, stageCreate, stageSandbox} {
		if got := <-order; got != want {
			t.Fatalf("granted stage %d, want %d (StartContainer, then CreateContainer, then RunPodSandbox)", got, want)
		}
	}
}

func TestLimitStartsWaitEndsWithItsContext(t *testing.T) {
	b := newBlockingStarts()
	l := LimitStarts(b, 1, clock.RealClock{}, nil, logr.Discard()).(*limitedStarts)
	go func() { _ = l.StartContainer(context.Background(), "first") }()
	<-b.entered
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		_, err := l.CreateContainer(ctx, "sb", &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "c"}}, nil)
		errc <- err
	}()
	waitQueued(t, l.slots, 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("a waiting call whose context ended: %v, want context.Canceled", err)
	}
	b.proceed <- struct{}{}
	if b.runs != 1 {
		t.Fatalf("%d calls reached the runtime, want 1: the cancelled one must not", b.runs)
	}
	if _, err := l.slots.acquire(context.Background(), stageSandbox); err != nil || l.slots.queued() != 0 {
		t.Fatalf("after the calls ended the slot is not free: err %v, %d waiting", err, l.slots.queued())
	}
}

// TestLimitStartsCancelRacesGrant ends waiting calls' contexts as slots are
// released to them: every slot comes back either way.
func TestLimitStartsCancelRacesGrant(t *testing.T) {
	s := newStartSlots(2)
	for range 200 {
		for range 2 {
			if _, err := s.acquire(context.Background(), stageCreate); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { _, err := s.acquire(ctx, stageStart); done <- err }()
		waitQueued(t, s, 1)
		go cancel()
		s.release()
		if err := <-done; err == nil {
			s.release()
		}
		s.release()
		s.mu.Lock()
		free := s.free
		s.mu.Unlock()
		if free != 2 || s.queued() != 0 {
			t.Fatalf("after every call ended %d of 2 slots are free and %d wait", free, s.queued())
		}
	}
}

func TestLimitStartsZeroIsNoLimit(t *testing.T) {
	b := newBlockingStarts()
	if got := LimitStarts(b, 0, clock.RealClock{}, nil, logr.Discard()); got != criapi.RuntimeService(b) {
		t.Fatalf("LimitStarts(rs, 0) = %T, want rs itself", got)
	}
}
