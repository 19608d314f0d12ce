package nodekit

import (
	"sync/atomic"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/managers/nodestatus"
	"github.com/nodekit/nodekit/managers/shutdown"
	"github.com/nodekit/nodekit/podworkers"
)

// shutdownWiring binds the shutdown manager's small interfaces to the
// agent and the pod workers (it kills through the same path as the
// eviction manager, not as an eviction), and hands the manager to the node
// status (Ready False while shutting down) and to admission.
func shutdownWiring() fx.Option {
	return fx.Options(
		fx.Provide(
			func(a *agent.Agent, w podworkers.Workers) shutdown.PodLister { return shutdownPods{a, w} },
			func(w podworkers.Workers) shutdown.PodKiller { return workerKiller{w: w} },
			func() *shutdownRef { return &shutdownRef{} },
		),
		fx.Invoke(connectShutdown),
	)
}

type shutdownParams struct {
	fx.In

	Ref        *shutdownRef
	Shutdown   shutdown.Manager   `optional:"true"`
	NodeStatus nodestatus.Manager `optional:"true"`
}

// connectShutdown makes the shutdown manager a ready gate of the node
// status and a step of admission.
func connectShutdown(p shutdownParams) {
	if p.Shutdown == nil {
		return
	}
	p.Ref.m.Store(&p.Shutdown)
	if g, ok := p.NodeStatus.(nodestatus.ReadyGated); ok {
		g.SetReadyGate(shutdownGate{p.Shutdown})
	}
}

// shutdownRef is the shutdown manager, set once the app is built (it
// depends on the agent, which depends on admission).
type shutdownRef struct {
	m atomic.Pointer[shutdown.Manager]
}

// admit is the manager's Admit; it admits without a manager.
func (r *shutdownRef) admit(pod *corev1.Pod) (string, string, bool) {
	if r == nil {
		return "", "", true
	}
	m := r.m.Load()
	if m == nil {
		return "", "", true
	}
	return (*m).Admit(pod)
}

// shutdownPods are the pods the kubelet's GetActivePods returns to its
// shutdown manager: those whose worker has not finished, without the
// terminal ones unless they are still terminating (a pod being deleted
// with a long grace period gets the shutdown's shorter one).
type shutdownPods struct {
	a *agent.Agent
	w podworkers.Workers
}

func (p shutdownPods) ActivePods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range p.a.GetPods() {
		if p.w.IsPodKnownTerminated(pod.UID) {
			continue
		}
		terminal := pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
		if terminal && !p.w.IsPodTerminationRequested(pod.UID) {
			continue
		}
		out = append(out, pod)
	}
	return out
}

// shutdownGate is the manager as the node status's ReadyGate.
type shutdownGate struct{ m shutdown.Manager }

func (g shutdownGate) NotReady() error          { return g.m.ShutdownStatus() }
func (g shutdownGate) Changed() <-chan struct{} { return g.m.Changed() }
