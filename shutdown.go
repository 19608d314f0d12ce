package nodekit

import (
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/internal/atomicref"
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
			readyGate,
			func() *shutdownRef { return &shutdownRef{} },
		),
		fx.Invoke(connectShutdown),
	)
}

type shutdownParams struct {
	fx.In

	Shutdown shutdown.Manager `optional:"true"`
}

// readyGate makes the shutdown manager a ready gate of the node status:
// Ready False while the node shuts down. nil without one.
func readyGate(p shutdownParams) nodestatus.ReadyGate {
	if p.Shutdown == nil || isNil(p.Shutdown) {
		return nil
	}
	return shutdownGate{p.Shutdown}
}

// connectShutdown closes a real dependency cycle: admission (the agent,
// through NodeResources) refuses pods while the node shuts down, and the
// shutdown manager needs the agent's pods. The agent gets an empty
// shutdownRef at construction and this fills it once the app is built;
// until then, and without a shutdown manager, pods are admitted.
func connectShutdown(ref *shutdownRef, p shutdownParams) {
	if p.Shutdown != nil && !isNil(p.Shutdown) {
		ref.Store(p.Shutdown)
	}
}

// shutdownRef is the shutdown manager, set once the app is built.
type shutdownRef struct {
	atomicref.Ref[shutdown.Manager]
}

// admit is the manager's Admit; it admits without a manager.
func (r *shutdownRef) admit(pod *corev1.Pod) (string, string, bool) {
	if r == nil {
		return "", "", true
	}
	m, ok := r.Load()
	if !ok {
		return "", "", true
	}
	return m.Admit(pod)
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
