package pleg

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// epoch is where every fake clock starts.
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fakeRuntime is a scripted noderuntime.Runtime: GetPods returns pods (or
// listErr), GetPodStatus returns a copy of statuses[uid] (or statusErr[uid]),
// and both count their calls. Methods the PLEG does not use panic through
// the nil embedded interface.
type fakeRuntime struct {
	noderuntime.Runtime

	mu        sync.Mutex
	pods      []*noderuntime.Pod
	listErr   error
	statuses  map[types.UID]*noderuntime.PodStatus
	statusErr map[types.UID]error
	// onList and onStatus, when set, run at the start of each call, without
	// the lock held.
	onList   func()
	onStatus func(uid types.UID)

	listCalls   int
	statusCalls map[types.UID]int
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{
		statuses:    make(map[types.UID]*noderuntime.PodStatus),
		statusErr:   make(map[types.UID]error),
		statusCalls: make(map[types.UID]int),
	}
}

// setPods scripts the next GetPods answers.
func (f *fakeRuntime) setPods(pods ...*noderuntime.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods = pods
}

func (f *fakeRuntime) GetPods(ctx context.Context, all bool) ([]*noderuntime.Pod, error) {
	f.mu.Lock()
	hook := f.onList
	f.mu.Unlock()
	if hook != nil {
		hook()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listCalls++
	if !all {
		return nil, fmt.Errorf("fake runtime: GetPods called with all=false")
	}
	if f.listErr != nil {
		return nil, f.listErr
	}
	return f.pods, nil
}

func (f *fakeRuntime) GetPodStatus(ctx context.Context, uid types.UID, name, namespace string) (*noderuntime.PodStatus, error) {
	f.mu.Lock()
	hook := f.onStatus
	f.mu.Unlock()
	if hook != nil {
		hook(uid)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statusCalls[uid]++
	if err := f.statusErr[uid]; err != nil {
		return nil, err
	}
	s := noderuntime.PodStatus{ID: uid, Name: name, Namespace: namespace}
	if t := f.statuses[uid]; t != nil {
		s = *t
	}
	return &s, nil
}

// inspections returns the total number of GetPodStatus calls.
func (f *fakeRuntime) inspections() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.statusCalls {
		n += c
	}
	return n
}

// pod builds a runtime pod; sandboxes are given as sandbox(...) containers.
func pod(uid types.UID, containers ...*noderuntime.Container) *noderuntime.Pod {
	p := &noderuntime.Pod{ID: uid, Name: "pod-" + string(uid), Namespace: "default"}
	for _, c := range containers {
		if c.Name == "" {
			p.Sandboxes = append(p.Sandboxes, c)
		} else {
			p.Containers = append(p.Containers, c)
		}
	}
	return p
}

// ctr builds a listed container.
func ctr(id string, state noderuntime.ContainerState) *noderuntime.Container {
	return &noderuntime.Container{ID: noderuntime.ContainerID{Type: "fake", ID: id}, Name: "c-" + id, State: state}
}

// sandbox builds a listed sandbox (a container without a name).
func sandbox(id string, state noderuntime.ContainerState) *noderuntime.Container {
	return &noderuntime.Container{ID: noderuntime.ContainerID{Type: "fake", ID: id}, State: state}
}

// newTestGeneric returns a Generic over a new fake runtime, fake clock and
// cache.
func newTestGeneric(t *testing.T, cfg Config) (*Generic, *fakeRuntime, *testingclock.FakeClock, *Cache) {
	t.Helper()
	rt := newFakeRuntime()
	clk := testingclock.NewFakeClock(epoch)
	cache := NewCache(clk)
	return NewGeneric(rt, cache, clk, nil, testr.New(t), cfg), rt, clk, cache
}

// drain returns the events waiting in ch.
func drain(ch <-chan *Event) []Event {
	var out []Event
	for {
		select {
		case ev := <-ch:
			out = append(out, *ev)
		default:
			return out
		}
	}
}
