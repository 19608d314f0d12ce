package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// errNotReady is returned by the runtime health check before its first run.
var errNotReady = errors.New("container runtime not checked yet")

// runtimeMonitor asks the container runtime for its Status every period,
// from a goroutine of its own (never the sync loop's), and keeps the
// verdict for the "runtime" health check, and the runtime's NetworkReady
// apart (the kubelet's runtimeState network errors: the node is not ready
// without a pod network, but the agent is healthy). A call that does not
// answer within timeout fails the check at once, even when the runtime
// ignores the call's deadline. Transitions are logged once each and
// signalled on changed, so the node status can follow them without
// waiting for its next tick.
type runtimeMonitor struct {
	rt      noderuntime.Runtime
	clk     clock.WithTicker
	log     logr.Logger
	period  time.Duration
	timeout time.Duration
	changed chan struct{} // capacity 1: a pending signal is never lost

	mu      sync.Mutex
	err     error
	network error // the last answered NetworkReady; nil when ready
	checked bool
}

// statusVerdict is one status check's outcome: err fails the "runtime" check;
// network, when answered, is the runtime's NetworkReady.
type statusVerdict struct {
	err      error
	answered bool
	network  error
}

func newRuntimeMonitor(rt noderuntime.Runtime, clk clock.WithTicker, log logr.Logger, period, timeout time.Duration) *runtimeMonitor {
	return &runtimeMonitor{rt: rt, clk: clk, log: log, period: period, timeout: timeout, changed: make(chan struct{}, 1)}
}

// run checks the runtime now and then every period until ctx ends.
func (m *runtimeMonitor) run(ctx context.Context) error {
	t := m.clk.NewTicker(m.period)
	defer t.Stop()
	for {
		m.checkOnce(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// checkOnce makes one Status call bounded by timeout and records the
// verdict. After a timeout it waits for the call to end before returning,
// so a runtime that ignores deadlines holds one goroutine, not one per
// period; the check stays failed meanwhile.
func (m *runtimeMonitor) checkOnce(ctx context.Context) {
	callCtx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	timer := m.clk.NewTimer(m.timeout)
	defer timer.Stop()
	res := make(chan statusVerdict, 1)
	go func() { res <- m.status(callCtx) }()
	select {
	case v := <-res:
		timer.Stop() // before the verdict shows: tests count the clock's waiters
		if ctx.Err() == nil {
			m.record(v)
		}
	case <-timer.C():
		m.record(statusVerdict{err: m.timedOut()})
		select {
		case <-res:
		case <-ctx.Done():
		}
	case <-ctx.Done():
	}
}

func (m *runtimeMonitor) timedOut() error {
	return fmt.Errorf("container runtime did not answer a status check within %s: %w", m.timeout, context.DeadlineExceeded)
}

// status asks the runtime whether it and its pod network are ready.
func (m *runtimeMonitor) status(ctx context.Context) statusVerdict {
	st, err := m.rt.Status(ctx)
	switch {
	case err != nil && ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return statusVerdict{err: fmt.Errorf("%w: %w", m.timedOut(), err)}
	case err != nil:
		return statusVerdict{err: fmt.Errorf("container runtime status check failed: %w", err)}
	case st == nil:
		return statusVerdict{err: errors.New("container runtime is not ready: no status")}
	}
	v := statusVerdict{answered: true}
	if !st.NetworkReady {
		v.network = fmt.Errorf("container runtime network not ready: %s", st.NetworkMessage)
	}
	if !st.Ready {
		v.err = fmt.Errorf("container runtime is not ready: %s", st.Message)
	}
	return v
}

// record stores the verdict, and logs and signals a transition.
func (m *runtimeMonitor) record(v statusVerdict) {
	err := v.err
	m.mu.Lock()
	first := !m.checked
	wasHealthy := m.checked && m.err == nil
	netChanged := v.answered && (m.network == nil) != (v.network == nil)
	m.err, m.checked = err, true
	if v.answered {
		m.network = v.network
	}
	m.mu.Unlock()
	if netChanged {
		if v.network != nil {
			m.log.Info("Container runtime network not ready", "networkReady", v.network.Error())
		} else {
			m.log.Info("Container runtime network is ready again")
		}
		m.signal()
	}
	switch {
	case err != nil && (first || wasHealthy):
		m.log.Error(err, "Container runtime is unhealthy")
	case err == nil && !first && !wasHealthy:
		m.log.Info("Container runtime is healthy again")
	case err == nil && first:
		m.log.V(2).Info("Container runtime is healthy")
	default:
		return // no transition
	}
	m.signal()
}

// signal tells the reader of changed to look again.
func (m *runtimeMonitor) signal() {
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// networkCheck is nil when the runtime last said its pod network is ready
// (or has not answered yet), else the kubelet's "container runtime network
// not ready" error with the runtime's reason and message.
func (m *runtimeMonitor) networkCheck() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.network
}

// check is the "runtime" health check: nil when the last status check
// passed.
func (m *runtimeMonitor) check() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.checked {
		return errNotReady
	}
	return m.err
}
