package nodestatus

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// Until the node first posts Ready, the kubelet checks its readiness every
// fastStatusUpdatePeriod and posts the status as soon as it is ready,
// instead of waiting for the next StatusUpdateFrequency tick (its
// fastNodeStatusUpdate), for at most nodeReadyGracePeriod after start-up.
const (
	fastStatusUpdatePeriod = 100 * time.Millisecond
	nodeReadyGracePeriod   = 120 * time.Second
)

// fastUpdates watches the agent's readiness until the node is posted
// Ready. Its channel is nil (never ready) once that happened or the grace
// period passed.
type fastUpdates struct {
	ticker clock.Ticker
	c      <-chan time.Time
	until  time.Time
}

// startFastUpdates starts watching unless the node is already posted Ready.
func (r *Reporter) startFastUpdates() *fastUpdates {
	f := &fastUpdates{}
	if r.postedReady() {
		return f
	}
	f.ticker = r.clk.NewTicker(fastStatusUpdatePeriod)
	f.c = f.ticker.C()
	f.until = r.clk.Now().Add(nodeReadyGracePeriod)
	return f
}

// stop ends the watch; a tick already sent is ignored.
func (f *fastUpdates) stop() {
	if f.ticker != nil {
		f.ticker.Stop()
	}
	f.ticker, f.c = nil, nil
}

// due reports, on a tick, whether the status should be posted now: the
// agent became ready. The watch ends at the grace period.
func (r *Reporter) fastUpdateDue(f *fastUpdates) bool {
	if r.clk.Now().After(f.until) {
		r.log.Info("node not ready within the grace period; its status goes out at the normal frequency",
			"node", r.cfg.NodeName, "gracePeriod", nodeReadyGracePeriod)
		f.stop()
		return false
	}
	return r.health.Ready() == nil
}

// postedReady reports whether the Node last posted has Ready True.
func (r *Reporter) postedReady() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.node == nil {
		return false
	}
	for _, c := range r.node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
