package sim

import (
	"context"
	"sync"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// subscriber is one GetContainerEvents call: an unbounded queue that
// emitLocked fills without blocking and the call drains into its channel.
type subscriber struct {
	mu    sync.Mutex
	queue []*runtimeapi.ContainerEventResponse
	wake  chan struct{}
}

func (s *subscriber) push(ev *runtimeapi.ContainerEventResponse) {
	s.mu.Lock()
	s.queue = append(s.queue, ev)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscriber) take() []*runtimeapi.ContainerEventResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
	s.queue = nil
	return q
}

// emitLocked sends an event about containerID (a container of sb, or sb
// itself) with a snapshot of sb and its containers to every subscriber. It
// does nothing, and costs nothing, without subscribers; it never blocks.
func (r *Runtime) emitLocked(sb *sandbox, containerID string, typ runtimeapi.ContainerEventType, at int64) {
	if len(r.subs) == 0 {
		return
	}
	for s := range r.subs {
		ev := &runtimeapi.ContainerEventResponse{ContainerId: containerID, ContainerEventType: typ, CreatedAt: at}
		if sb != nil {
			ev.PodSandboxStatus = sb.statusLocked()
			ev.ContainersStatuses = sb.containerStatusesLocked()
		}
		s.push(ev)
	}
}

// GetContainerEvents streams every container event from now on to
// containerEventsCh until ctx ends: CONTAINER_CREATED, _STARTED, _STOPPED
// and _DELETED, for containers and, as containerd does, for sandboxes (whose
// events carry the sandbox ID as ContainerId). Each event carries the
// sandbox's status and its containers' statuses at the time of the event;
// the receiver owns them. Events are delivered in order; the runtime never
// blocks on a slow receiver (events queue up for it).
//
// connectionEstablishedCallback, when not nil, is called once the
// subscription is in place, with a nil stream: there is no gRPC stream in
// process (the kubelet's evented PLEG only counts the call). GetContainerEvents
// blocks until ctx ends and then returns a gRPC Canceled or DeadlineExceeded
// status error, as the remote client does when its stream ends.
func (r *Runtime) GetContainerEvents(ctx context.Context, containerEventsCh chan *runtimeapi.ContainerEventResponse, connectionEstablishedCallback func(runtimeapi.RuntimeService_GetContainerEventsClient)) error {
	r.calls.Add(1)
	s := &subscriber{wake: make(chan struct{}, 1)}
	r.mu.Lock()
	r.subs[s] = struct{}{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.subs, s)
		r.mu.Unlock()
	}()
	if connectionEstablishedCallback != nil {
		connectionEstablishedCallback(nil)
	}
	for {
		select {
		case <-ctx.Done():
			return ctxError(ctx.Err())
		case <-s.wake:
		}
		for _, ev := range s.take() {
			select {
			case containerEventsCh <- ev:
			case <-ctx.Done():
				return ctxError(ctx.Err())
			}
		}
	}
}
