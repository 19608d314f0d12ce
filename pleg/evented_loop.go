package pleg

import (
	"context"
	"errors"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// resyncDelay is how long after the stream opened the PLEG relists to catch
// what happened while it was closed. A remote runtime subscribes the stream
// a moment after the client sees it open; relisting before that could miss
// a change made in between.
const resyncDelay = 100 * time.Millisecond

// streamNote is what the stream goroutine tells the loop.
type streamNote struct {
	// err is nil when the stream opened, else why it ended.
	err error
}

// stream keeps the event stream open until ctx ends: it opens it, and
// after each failure waits a backoff that doubles up to
// MaxReconnectBackoff (and starts over once the stream opened). It closes
// done when it returns.
func (e *Evented) stream(ctx context.Context, raw chan *runtimeapi.ContainerEventResponse, notes chan<- streamNote, done chan<- struct{}) {
	defer close(done)
	cfg := e.cfg.Evented
	backoff := cfg.ReconnectBackoff
	note := func(n streamNote) bool {
		select {
		case notes <- n:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for ctx.Err() == nil {
		err := e.src.GetContainerEvents(ctx, raw, func(runtimeapi.RuntimeService_GetContainerEventsClient) {
			backoff = cfg.ReconnectBackoff
			note(streamNote{})
		})
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("the runtime closed the event stream")
		}
		if !note(streamNote{err: err}) {
			return
		}
		t := e.clk.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		backoff = min(2*backoff, cfg.MaxReconnectBackoff)
	}
}

// loopTimer is an optional timer of the loop: its channel is nil while it
// is not armed.
type loopTimer struct {
	clk clock.WithTicker
	t   clock.Timer
}

func (l *loopTimer) arm(d time.Duration) {
	l.stop()
	l.t = l.clk.NewTimer(d)
}

func (l *loopTimer) armed() bool { return l.t != nil }

func (l *loopTimer) c() <-chan time.Time {
	if l.t == nil {
		return nil
	}
	return l.t.C()
}

// fired forgets a timer whose channel delivered.
func (l *loopTimer) fired() { l.t = nil }

func (l *loopTimer) stop() {
	if l.t != nil {
		l.t.Stop()
		l.t = nil
	}
}

// loopState is the loop's own state.
type loopState struct {
	// failures counts stream failures since it last opened.
	failures int
	// opened tells whether the stream ever opened.
	opened bool
	// periodic is the reconcile relist (events) or fallback relist
	// (relisting); waiters the relist for waiting pod workers; resync the
	// relist after the stream opened.
	periodic, waiters, resync loopTimer
}

// loop handles events, stream notes and relists until ctx ends.
func (e *Evented) loop(ctx context.Context, raw chan *runtimeapi.ContainerEventResponse, notes <-chan streamNote) {
	s := &loopState{
		periodic: loopTimer{clk: e.clk}, waiters: loopTimer{clk: e.clk}, resync: loopTimer{clk: e.clk},
	}
	defer s.periodic.stop()
	defer s.waiters.stop()
	defer s.resync.stop()
	s.periodic.arm(e.cfg.Evented.ReconcilePeriod)
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-raw:
			e.handle(ctx, ev)
		case n := <-notes:
			if e.onNote(n, s) {
				e.drain(ctx, raw)
				e.relist(ctx, reasonFallback)
				s.periodic.arm(e.cfg.RelistPeriod)
			}
		case <-e.cache.Waiting():
			if !s.waiters.armed() {
				s.waiters.arm(e.cfg.Evented.WaiterRelistDelay)
			}
		case <-s.waiters.c():
			s.waiters.fired()
			if e.cache.Blocked() > 0 {
				e.drain(ctx, raw)
				e.relist(ctx, reasonWaiters)
			}
		case <-s.resync.c():
			s.resync.fired()
			e.drain(ctx, raw)
			e.relist(ctx, reasonResync)
			e.setMode(ModeEvents)
			s.periodic.arm(e.cfg.Evented.ReconcilePeriod)
		case <-s.periodic.c():
			s.periodic.fired()
			e.drain(ctx, raw)
			if e.Mode() == ModeEvents {
				e.relist(ctx, reasonReconcile)
				s.periodic.arm(e.cfg.Evented.ReconcilePeriod)
			} else {
				e.relist(ctx, reasonFallback)
				s.periodic.arm(e.cfg.RelistPeriod)
			}
		}
	}
}

// onNote handles the stream opening or failing; it reports whether the PLEG
// just fell back to relisting, and must relist now.
func (e *Evented) onNote(n streamNote, s *loopState) (fallback bool) {
	if n.err == nil {
		if s.opened {
			e.reconnects.Add(1)
			e.em.reconnects.Inc()
		}
		s.opened = true
		s.failures = 0
		e.em.connections.Inc()
		e.setConnected(e.clk.Now())
		e.log.V(2).Info("Container event stream opened")
		s.resync.arm(resyncDelay)
		return false
	}
	s.failures++
	e.em.connErrors.Inc()
	e.setConnected(time.Time{})
	s.resync.stop()
	e.forgetSuspects()
	e.log.Error(n.err, "Container event stream failed; reopening it", "failures", s.failures)
	if s.failures >= e.cfg.Evented.FallbackAfter && e.Mode() == ModeEvents {
		e.setMode(ModeRelisting)
		return true
	}
	return false
}

// drain handles the events already received, so that a relist does not
// take them for missed ones.
func (e *Evented) drain(ctx context.Context, raw chan *runtimeapi.ContainerEventResponse) {
	for n := len(raw); n > 0; n-- {
		select {
		case ev := <-raw:
			e.handle(ctx, ev)
		default:
			return
		}
	}
}
