package agent

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// GetPods returns a copy of every pod the agent runs, each with its newest
// status, oldest first. It is what the server's /pods shows. The caller owns
// the returned pods.
func (a *Agent) GetPods() []*corev1.Pod {
	pods := a.registry.List()
	out := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		c := p.DeepCopy()
		if st, ok := a.statuses.GetPodStatus(p.UID); ok {
			c.Status = *st.DeepCopy()
		}
		out = append(out, c)
	}
	return out
}

// Check is one named health check; the server's /healthz runs it.
type Check struct {
	// CheckName names the check ("syncloop", "pleg", "runtime").
	CheckName string
	// Fn returns nil when healthy.
	Fn func() error
}

// Name returns the check's name.
func (c Check) Name() string { return c.CheckName }

// Check runs the check.
func (c Check) Check() error { return c.Fn() }

// HealthChecks returns the agent's health checks: the sync loop is turning,
// the PLEG keeps up, the container runtime answers and is ready. The
// "runtime" check reports the verdict of a status check that Run makes every
// RuntimeCheckPeriod from its own goroutine, each bounded by
// RuntimeCheckTimeout: a hung runtime fails it within their sum (7s by
// default). Every check returns at once and is safe for concurrent use.
func (a *Agent) HealthChecks() []Check {
	return []Check{
		{CheckName: "syncloop", Fn: a.syncLoopHealthy},
		{CheckName: "pleg", Fn: a.plegHealthy},
		{CheckName: "runtime", Fn: a.runtimeHealthy},
	}
}

func (a *Agent) syncLoopHealthy() error {
	last := time.Unix(0, a.loopTime.Load())
	if since := a.clk.Since(last); since > a.cfg.SyncLoopHealthThreshold {
		return fmt.Errorf("sync loop last ran %s ago; threshold is %s", since.Round(time.Second), a.cfg.SyncLoopHealthThreshold)
	}
	return nil
}

func (a *Agent) plegHealthy() error {
	if ok, err := a.pleg.Healthy(); !ok {
		if err == nil {
			err = errors.New("pleg is not healthy")
		}
		return err
	}
	return nil
}

func (a *Agent) runtimeHealthy() error { return a.runtime.check() }
