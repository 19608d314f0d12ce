package cri

import (
	"context"
	"fmt"
	"sync"

	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Start stages, in the order a pod goes through them; a later stage waits
// ahead of an earlier one.
const (
	stageSandbox = iota // RunPodSandbox
	stageCreate         // CreateContainer
	stageStart          // StartContainer
	stageCount
)

// LimitStarts wraps a CRI runtime service so that at most n of its
// RunPodSandbox, CreateContainer and StartContainer calls are in flight at
// once. A call over the limit waits, before it reaches the runtime, until a
// call ends or its context does (then it fails with the context's error and
// never reaches the runtime). Waiting calls go in order of the pod's
// progress, then of arrival: a StartContainer before any CreateContainer,
// a CreateContainer before any RunPodSandbox, so pods already begun finish
// first instead of every pod's sandbox being made before any container.
//
// It keeps a burst of new pods (500 at once on a small node) from piling
// every start on the runtime together, each call then outlasting the
// request timeout and being retried as a new container. The wait happens
// before the call's own timeout starts. Every other call, the stops and
// removals of a kill above all, passes straight through. n <= 0 returns rs
// itself: no limit, the kubelet's behaviour.
func LimitStarts(rs criapi.RuntimeService, n int) criapi.RuntimeService {
	if n <= 0 {
		return rs
	}
	return &limitedStarts{RuntimeService: rs, slots: newStartSlots(n)}
}

type limitedStarts struct {
	criapi.RuntimeService
	slots *startSlots
}

func (l *limitedStarts) RunPodSandbox(ctx context.Context, c *runtimeapi.PodSandboxConfig, handler string) (string, error) {
	if err := l.slots.acquire(ctx, stageSandbox); err != nil {
		return "", err
	}
	defer l.slots.release()
	return l.RuntimeService.RunPodSandbox(ctx, c, handler)
}

func (l *limitedStarts) CreateContainer(ctx context.Context, sb string, c *runtimeapi.ContainerConfig, sc *runtimeapi.PodSandboxConfig) (string, error) {
	if err := l.slots.acquire(ctx, stageCreate); err != nil {
		return "", err
	}
	defer l.slots.release()
	return l.RuntimeService.CreateContainer(ctx, sb, c, sc)
}

func (l *limitedStarts) StartContainer(ctx context.Context, id string) error {
	if err := l.slots.acquire(ctx, stageStart); err != nil {
		return err
	}
	defer l.slots.release()
	return l.RuntimeService.StartContainer(ctx, id)
}

// startSlots is a counting semaphore whose waiters are served by stage,
// latest first, then in arrival order.
type startSlots struct {
	mu      sync.Mutex
	limit   int
	free    int
	waiting [stageCount][]chan struct{}
}

func newStartSlots(n int) *startSlots { return &startSlots{limit: n, free: n} }

// acquire takes a slot for a call of stage, waiting while none is free.
func (s *startSlots) acquire(ctx context.Context, stage int) error {
	s.mu.Lock()
	if s.free > 0 {
		s.free--
		s.mu.Unlock()
		return nil
	}
	granted := make(chan struct{})
	s.waiting[stage] = append(s.waiting[stage], granted)
	s.mu.Unlock()
	select {
	case <-granted:
		return nil
	case <-ctx.Done():
		if !s.leave(stage, granted) {
			s.release() // granted as the context ended: pass the slot on
		}
		return fmt.Errorf("waiting for one of the %d runtime start slots: %w", s.limit, ctx.Err())
	}
}

// leave takes a waiter out of its queue; false means it was granted a
// slot already.
func (s *startSlots) leave(stage int, granted chan struct{}) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.waiting[stage]
	for i, ch := range q {
		if ch == granted {
			s.waiting[stage] = append(q[:i:i], q[i+1:]...)
			return true
		}
	}
	return false
}

// release hands a slot to the first waiter of the latest stage, or frees it.
func (s *startSlots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for stage := stageCount - 1; stage >= 0; stage-- {
		if q := s.waiting[stage]; len(q) > 0 {
			s.waiting[stage] = q[1:]
			close(q[0])
			return
		}
	}
	s.free++
}
