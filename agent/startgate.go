package agent

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nodekit/nodekit/agent/admission"
	"github.com/nodekit/nodekit/podworkers"
)

// StartGate is the agent's start-order slot: it decides in which order new
// pods are admitted and when an admitted pod is handed to its pod worker.
// "Start by priority", "at most N pods starting at once" or "wait for a
// device" are each a small StartGate. The agent calls it from its sync loop
// only: its methods must return quickly and must not mutate the pods.
type StartGate interface {
	// Order sorts a batch of new pods in place before the agent admits
	// them, one at a time, in that order: a pod earlier in the batch gets
	// the node's room first. FIFOStart sorts oldest first, as the kubelet.
	Order(pods []*corev1.Pod)
	// Ready returns, of the admitted pods that wait to start (in admission
	// order, each the newest version of its spec), those to hand to their
	// pod workers now, in that order; the others keep waiting. A returned
	// pod that is not among waiting is ignored. Whenever pods wait, the
	// agent asks after each batch of new pods, on every PLEG event (a
	// container started or stopped), after housekeeping, at every sync
	// tick (Config.SyncPeriod) and, for a StartGateWaker, when it asks.
	Ready(waiting []*corev1.Pod, state StartState) []*corev1.Pod
}

// StartGateWaker is a StartGate that can ask to be asked again at once,
// so a gate that waits on something outside the agent (a device, a
// license, a neighbour) lets its pods go when that thing happens, not at
// the next sync tick: after a value arrives on Wake, the agent calls Ready
// from its sync loop.
type StartGateWaker interface {
	StartGate
	// Wake returns the channel the gate signals on: the same on every call
	// (a buffered channel of one, written without blocking, is enough).
	Wake() <-chan struct{}
}

// gateWake is the gate's Wake channel, or nil (never ready) for a gate
// that has none.
func gateWake(g StartGate) <-chan struct{} {
	if w, ok := g.(StartGateWaker); ok {
		return w.Wake()
	}
	return nil
}

// StartState is what the node is doing, for a StartGate.
type StartState struct {
	// Starting are the pods handed to their workers that are not yet
	// Running: their phase is Pending, or they have no status yet. They
	// are the agent's: read-only.
	Starting []*corev1.Pod
	// Active counts the active pods: those handed to workers that have not
	// finished, and those waiting to start.
	Active int
}

// FIFOStart is the default StartGate, the kubelet's behaviour: each batch
// is admitted oldest first (by creation time, then name), and every
// admitted pod starts at once.
type FIFOStart struct{}

var _ StartGate = FIFOStart{}

// Order implements StartGate: oldest first.
func (FIFOStart) Order(pods []*corev1.Pod) { sortByAge(pods) }

// Ready implements StartGate: every waiting pod, now.
func (FIFOStart) Ready(waiting []*corev1.Pod, _ StartState) []*corev1.Pod { return waiting }

// handleAdditions orders a batch of new pods with the start gate, admits
// them one at a time (each admitted pod counts among the others of the
// next), holds the admitted ones at the gate and starts those it lets go.
func (a *Agent) handleAdditions(pods []*corev1.Pod) {
	a.gate.Order(pods)
	others := a.activePodList("") // listed once: a batch of N pods costs O(N) lookups
	active := make(map[types.UID]bool, len(others))
	for _, p := range others {
		active[p.UID] = true
	}
	for _, pod := range pods {
		a.registry.Set(pod)
		attrs := &admission.Attributes{Pod: pod, OtherPods: others}
		if active[pod.UID] { // a pod the node already runs is not its own neighbour
			attrs.OtherPods = a.activePodList(pod.UID)
		}
		if r := a.admit.Admit(attrs); !r.Admit {
			a.reject(pod, r.Reason, r.Message)
			continue
		}
		if !active[pod.UID] {
			others = append(others, pod)
			active[pod.UID] = true
		}
		a.hold(pod)
	}
	a.releaseWaiting()
}

// hold puts an admitted pod at the start gate.
func (a *Agent) hold(pod *corev1.Pod) {
	terminating := a.workers.IsPodTerminationRequested(pod.UID)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range a.waiting {
		if p.UID == pod.UID {
			return
		}
	}
	a.waiting = append(a.waiting, pod)
	if terminating {
		a.heldTerminating[pod.UID] = true
	}
}

// dropKilledWaiting takes from the start gate the pods that were killed
// while they waited (evicted, or stopped by a node shutdown, through the
// pod workers): their worker ended them, and a create now would restart a
// pod that reached a terminal phase, which the kubelet never does.
func (a *Agent) dropKilledWaiting(waiting []*corev1.Pod) []*corev1.Pod {
	out := waiting[:0]
	for _, p := range waiting {
		a.mu.Lock()
		wasTerminating := a.heldTerminating[p.UID]
		a.mu.Unlock()
		if !wasTerminating && a.workers.IsPodTerminationRequested(p.UID) {
			a.unhold(p.UID)
			a.log.V(2).Info("Pod was killed while it waited at the start gate; it will not start", "pod", klog.KObj(p), "podUID", p.UID)
			continue
		}
		out = append(out, p)
	}
	return out
}

// unhold takes a pod from the start gate; it reports whether it waited.
func (a *Agent) unhold(uid types.UID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, p := range a.waiting {
		if p.UID == uid {
			a.waiting = append(a.waiting[:i:i], a.waiting[i+1:]...)
			delete(a.heldTerminating, uid)
			return true
		}
	}
	return false
}

// isWaiting reports whether the pod waits at the start gate.
func (a *Agent) isWaiting(uid types.UID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.waitingLocked(uid)
}

func (a *Agent) waitingLocked(uid types.UID) bool {
	for _, p := range a.waiting {
		if p.UID == uid {
			return true
		}
	}
	return false
}

// releaseWaiting asks the start gate which waiting pods start now, and
// hands them to their workers in its order.
func (a *Agent) releaseWaiting() {
	a.mu.Lock()
	waiting := append([]*corev1.Pod(nil), a.waiting...)
	a.mu.Unlock()
	if len(waiting) == 0 {
		return
	}
	for i, p := range waiting {
		if newest := a.registry.Get(p.UID); newest != nil {
			waiting[i] = newest
		}
	}
	if waiting = a.dropKilledWaiting(waiting); len(waiting) == 0 {
		return
	}
	for _, pod := range a.gate.Ready(waiting, a.startState(len(waiting))) {
		if !a.unhold(pod.UID) {
			continue
		}
		if newest := a.registry.Get(pod.UID); newest != nil {
			pod = newest
		}
		a.log.V(4).Info("Start gate let pod go", "pod", klog.KObj(pod), "podUID", pod.UID)
		a.startOrUpdate(pod, podworkers.SyncPodCreate)
	}
}

// startState is what the start gate sees: the started pods not yet
// Running, and how many pods are active.
func (a *Agent) startState(waiting int) StartState {
	a.mu.Lock()
	uids := make([]types.UID, 0, len(a.started))
	for uid := range a.started {
		uids = append(uids, uid)
	}
	pending := len(a.pendingStart)
	a.mu.Unlock()
	st := StartState{Active: waiting + pending}
	for _, uid := range uids {
		if a.workers.IsPodKnownTerminated(uid) {
			continue
		}
		status, ok := a.statuses.GetPodStatus(uid)
		if ok && isTerminalPhase(status.Phase) {
			continue
		}
		st.Active++
		if ok && status.Phase != corev1.PodPending {
			continue
		}
		if p := a.registry.Get(uid); p != nil {
			st.Starting = append(st.Starting, p)
		}
	}
	return st
}
