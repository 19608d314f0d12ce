package abtest

import (
	"context"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// exitTimes are the moments of one container exit, on the host's clock.
type exitTimes struct {
	// recorded is when the runtime recorded the exit: the time it stamped
	// on its CONTAINER_STOPPED event, seen on the harness's own stream.
	recorded time.Time
	// emitted is when the PLEG sent ContainerDied.
	emitted time.Time
}

// wakeRecorder follows each container exit: the runtime recording it, the
// PLEG's ContainerDied, and the first status a pod worker gets from the
// cache that shows the exit. Only exits within the measurement window
// count.
type wakeRecorder struct {
	mu       sync.Mutex
	from, to time.Time
	times    map[string]*exitTimes
	woken    map[string]bool
	st       Stages
}

// Stages are the samples, per exit, of each stage of its detection.
type Stages struct {
	// Wake is from the exit (FinishedAt) to the worker woken with it.
	Wake []time.Duration
	// Runtime is from the exit to the runtime recording it.
	Runtime []time.Duration
	// Recorded is from the runtime recording the exit to the worker woken.
	Recorded []time.Duration
	// Emit is from the runtime recording the exit to the PLEG's
	// ContainerDied.
	Emit []time.Duration
	// Handoff is from ContainerDied to the worker woken.
	Handoff []time.Duration
}

func newWakeRecorder() *wakeRecorder {
	return &wakeRecorder{times: map[string]*exitTimes{}, woken: map[string]bool{}}
}

// window sets the measurement window: exits between from and to count.
func (r *wakeRecorder) window(from, to time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.from, r.to = from, to
}

func (r *wakeRecorder) timesOf(id string) *exitTimes {
	t := r.times[id]
	if t == nil {
		t = &exitTimes{}
		r.times[id] = t
	}
	return t
}

// runtimeEvent records the runtime's event about a container's exit.
func (r *wakeRecorder) runtimeEvent(ev *runtimeapi.ContainerEventResponse) {
	if ev.GetContainerEventType() != runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT || ev.GetCreatedAt() <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.timesOf(ev.GetContainerId()); t.recorded.IsZero() {
		t.recorded = time.Unix(0, ev.GetCreatedAt())
	}
}

// watch reads the runtime's event stream until ctx ends, recording exits.
func (r *wakeRecorder) watch(ctx context.Context, src pleg.EventSource) {
	ch := make(chan *runtimeapi.ContainerEventResponse, 1000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			_ = src.GetContainerEvents(ctx, ch, nil)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	for {
		select {
		case ev := <-ch:
			r.runtimeEvent(ev)
		case <-done:
			return
		}
	}
}

// emittedEvent records the PLEG's ContainerDied.
func (r *wakeRecorder) emittedEvent(ev *pleg.Event, now time.Time) {
	if ev.Type != pleg.ContainerDied {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.timesOf(ev.Data); t.emitted.IsZero() {
		t.emitted = now
	}
}

// observe records the exits a worker was woken with at now.
func (r *wakeRecorder) observe(s *noderuntime.PodStatus, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range s.ContainerStatuses {
		if c.State != noderuntime.ContainerStateExited || r.woken[c.ID.ID] {
			continue
		}
		r.woken[c.ID.ID] = true
		if r.from.IsZero() || c.FinishedAt.Before(r.from) || (!r.to.IsZero() && !c.FinishedAt.Before(r.to)) {
			continue
		}
		r.st.Wake = append(r.st.Wake, max(now.Sub(c.FinishedAt), 0))
		t := r.timesOf(c.ID.ID)
		if !t.recorded.IsZero() {
			r.st.Runtime = append(r.st.Runtime, max(t.recorded.Sub(c.FinishedAt), 0))
			r.st.Recorded = append(r.st.Recorded, max(now.Sub(t.recorded), 0))
			if !t.emitted.IsZero() {
				r.st.Emit = append(r.st.Emit, max(t.emitted.Sub(t.recorded), 0))
			}
		}
		if !t.emitted.IsZero() {
			r.st.Handoff = append(r.st.Handoff, max(now.Sub(t.emitted), 0))
		}
	}
}

// stages returns the samples of each stage, shortest first.
func (r *wakeRecorder) stages() Stages {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stages{Wake: sorted(r.st.Wake), Runtime: sorted(r.st.Runtime), Recorded: sorted(r.st.Recorded),
		Emit: sorted(r.st.Emit), Handoff: sorted(r.st.Handoff)}
}

func sorted(in []time.Duration) []time.Duration {
	out := append([]time.Duration(nil), in...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// wrap is the fx decorator of the workers' StatusCache.
func (r *wakeRecorder) wrap(c podworkers.StatusCache) podworkers.StatusCache {
	return &timedCache{StatusCache: c, r: r}
}

// timedCache is the workers' StatusCache, observed.
type timedCache struct {
	podworkers.StatusCache
	r *wakeRecorder
}

func (c *timedCache) GetNewerThan(ctx context.Context, uid types.UID, minTime time.Time) (*noderuntime.PodStatus, error) {
	s, err := c.StatusCache.GetNewerThan(ctx, uid, minTime)
	if s != nil {
		c.r.observe(s, time.Now())
	}
	return s, err
}

// tappedPLEG forwards a PLEG's events, noting when each ContainerDied
// leaves it.
type tappedPLEG struct {
	pleg.Interface
	r   *wakeRecorder
	out chan *pleg.Event
}

func (p *tappedPLEG) Watch() <-chan *pleg.Event { return p.out }

// Run runs the PLEG and the forwarder until ctx ends.
func (p *tappedPLEG) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		in := p.Interface.Watch()
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-in:
				p.r.emittedEvent(ev, time.Now())
				select {
				case p.out <- ev:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	err := p.Interface.Run(ctx)
	<-done
	return err
}
