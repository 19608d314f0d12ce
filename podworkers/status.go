package podworkers

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// statusFor returns the status a sync of wk runs with: the cache's first
// status of the pod observed after lastSync. A terminating or terminated
// pod waits for it at most Config.TerminationStatusWait when the handler is
// a PodStatusReader, and then gets the status the handler reads from the
// runtime.
func (p *PodWorkers) statusFor(ctx context.Context, uid types.UID, wk work, lastSync time.Time) (*noderuntime.PodStatus, error) {
	reader, ok := p.handler.(PodStatusReader)
	if wk.state == SyncPod || !ok || wk.opts.Pod == nil {
		status, err := p.cache.GetNewerThan(ctx, uid, lastSync)
		if err != nil {
			return nil, fmt.Errorf("get status of pod %s newer than %s: %w", uid, lastSync, err)
		}
		return status, nil
	}
	status, timedOut, err := p.waitCache(ctx, uid, lastSync)
	if !timedOut {
		if err != nil {
			return nil, fmt.Errorf("get status of pod %s newer than %s: %w", uid, lastSync, err)
		}
		return status, nil
	}
	pod := wk.opts.Pod
	p.log.Info("No status newer than the last sync in the cache, reading it from the runtime",
		"podUID", uid, "workType", wk.state, "waited", p.cfg.TerminationStatusWait)
	status, err = reader.GetPodStatus(ctx, uid, pod.Name, pod.Namespace)
	if err != nil {
		return nil, fmt.Errorf("read status of pod %s from the runtime: %w", uid, err)
	}
	return status, nil
}

// waitCache is the cache's GetNewerThan, given up after
// Config.TerminationStatusWait on the workers' clock (timedOut true).
func (p *PodWorkers) waitCache(ctx context.Context, uid types.UID, lastSync time.Time) (status *noderuntime.PodStatus, timedOut bool, err error) {
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	timer := p.clock.NewTimer(p.cfg.TerminationStatusWait)
	defer timer.Stop()
	expired := make(chan struct{})
	go func() {
		select {
		case <-timer.C():
			close(expired)
			cancel()
		case <-waitCtx.Done():
		}
	}()
	status, err = p.cache.GetNewerThan(waitCtx, uid, lastSync)
	if err == nil || ctx.Err() != nil {
		return status, false, err
	}
	select {
	case <-expired:
		return nil, true, nil
	default:
		return nil, false, err
	}
}
