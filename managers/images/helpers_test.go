package images

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeImages is an image service with images of given sizes.
type fakeImages struct {
	mu      sync.Mutex
	images  map[string]*runtimeapi.Image
	removed []string
	failIDs map[string]bool
}

func newFakeImages() *fakeImages {
	return &fakeImages{images: map[string]*runtimeapi.Image{}, failIDs: map[string]bool{}}
}

func (f *fakeImages) add(id, tag string, size uint64, pinned bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.images[id] = &runtimeapi.Image{Id: id, RepoTags: []string{tag}, Size: size, Pinned: pinned}
}

func (f *fakeImages) ListImages(context.Context, *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtimeapi.Image
	for _, img := range f.images {
		out = append(out, img)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return out, nil
}

func (f *fakeImages) RemoveImage(_ context.Context, spec *runtimeapi.ImageSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failIDs[spec.Image] {
		return fmt.Errorf("image %s is busy", spec.Image)
	}
	if _, ok := f.images[spec.Image]; !ok {
		return fmt.Errorf("no image %s", spec.Image)
	}
	delete(f.images, spec.Image)
	f.removed = append(f.removed, spec.Image)
	return nil
}

func (f *fakeImages) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for id := range f.images {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// fakeRuntime lists containers and answers Status with an info map.
type fakeRuntime struct {
	mu         sync.Mutex
	containers []*runtimeapi.Container
	info       map[string]string
}

func (f *fakeRuntime) use(image, imageRef string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.containers = append(f.containers, &runtimeapi.Container{
		Id: fmt.Sprint(len(f.containers)), Image: &runtimeapi.ImageSpec{Image: image}, ImageRef: imageRef,
		State: runtimeapi.ContainerState_CONTAINER_EXITED,
	})
}

func (f *fakeRuntime) clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.containers = nil
}

func (f *fakeRuntime) ListContainers(context.Context, *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*runtimeapi.Container(nil), f.containers...), nil
}

func (f *fakeRuntime) Status(context.Context, bool) (*runtimeapi.StatusResponse, error) {
	return &runtimeapi.StatusResponse{Info: f.info}, nil
}

// fakeFs reports a capacity and computes available from the images left.
type fakeFs struct {
	capacity, otherUsed uint64
	images              *fakeImages
	err                 error
}

func (f *fakeFs) ImageFsUsage(context.Context) (uint64, uint64, error) {
	if f.err != nil {
		return 0, 0, f.err
	}
	used := f.otherUsed
	f.images.mu.Lock()
	for _, img := range f.images.images {
		used += img.Size
	}
	f.images.mu.Unlock()
	return f.capacity, f.capacity - used, nil
}

// event is one recorded event.
type event struct{ kind, reason, message string }

type fakeEvents struct {
	mu     sync.Mutex
	events []event
	ch     chan event // when set, receives every event too
}

func (e *fakeEvents) Eventf(_ apiruntime.Object, eventType, reason, messageFmt string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ev := event{eventType, reason, fmt.Sprintf(messageFmt, args...)}
	e.events = append(e.events, ev)
	if e.ch != nil {
		e.ch <- ev
	}
}

func (e *fakeEvents) reasons() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.events {
		out = append(out, ev.reason)
	}
	return out
}

// fixture is a GC on fakes at a fake time.
type fixture struct {
	images  *fakeImages
	rt      *fakeRuntime
	fs      *fakeFs
	events  *fakeEvents
	clk     *clocktesting.FakeClock
	gc      *GC
	reg     *prometheus.Registry
	started time.Time
}

func newFixture(t *testing.T, cfg Config, filter Filter) *fixture {
	t.Helper()
	f := &fixture{images: newFakeImages(), rt: &fakeRuntime{}, events: &fakeEvents{},
		clk: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), reg: prometheus.NewRegistry()}
	f.fs = &fakeFs{capacity: 1000, images: f.images}
	f.started = f.clk.Now()
	f.gc = NewGC(f.images, f.rt, f.fs, f.events, f.clk, f.reg, logr.Discard(), cfg, filter)
	return f
}
