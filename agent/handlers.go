package agent

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/podworkers"
	"github.com/nodekit/nodekit/sources"
)

// dispatch applies one update from the pod config.
func (a *Agent) dispatch(u sources.PodUpdate) {
	a.log.V(2).Info("Pod update", "op", u.Op.String(), "source", u.Source, "pods", len(u.Pods))
	pods, mirrors := splitMirrors(u.Pods)
	a.handleMirrors(u.Op, mirrors)
	switch u.Op {
	case sources.ADD:
		a.handleAdditions(pods)
	case sources.UPDATE, sources.DELETE:
		for _, pod := range pods {
			a.registry.Set(pod)
			a.startOrUpdate(pod, podworkers.SyncPodUpdate)
		}
	case sources.REMOVE:
		for _, pod := range pods {
			a.registry.Remove(pod)
			a.forgetPending(pod.UID)
			a.unhold(pod.UID)
			a.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodKill, Pod: pod})
		}
	case sources.RECONCILE:
		for _, pod := range pods {
			a.registry.Set(pod)
			if readinessNeedsSync(pod) && !a.isPending(pod.UID) {
				a.startOrUpdate(pod, podworkers.SyncPodSync)
			}
		}
	}
}

func splitMirrors(all []*corev1.Pod) (pods, mirrors []*corev1.Pod) {
	for _, p := range all {
		if isMirror(p) {
			mirrors = append(mirrors, p)
		} else {
			pods = append(pods, p)
		}
	}
	return pods, mirrors
}

// handleMirrors records mirror pods; a mirror that changed or went away gets
// its static pod synced, which recreates it. Mirror pods never run.
func (a *Agent) handleMirrors(op sources.Op, mirrors []*corev1.Pod) {
	for _, m := range mirrors {
		if op == sources.REMOVE {
			a.registry.Remove(m)
		} else {
			a.registry.Set(m)
		}
		if static := a.registry.StaticFor(m); static != nil && op != sources.RECONCILE && !a.isPending(static.UID) {
			a.startOrUpdate(static, podworkers.SyncPodSync)
		}
	}
}

// startOrUpdate hands a pod to its worker, unless it is a static pod whose
// full name is still used by a pod that has not stopped (an edited manifest:
// the old pod must stop before the new one starts).
func (a *Agent) startOrUpdate(pod *corev1.Pod, t podworkers.UpdateType) {
	if a.isRejected(pod.UID) {
		return
	}
	if t != podworkers.SyncPodCreate && a.isWaiting(pod.UID) {
		if pod.DeletionTimestamp == nil {
			return // the registry has the new spec; the gate starts it
		}
		a.unhold(pod.UID) // deleted before it started: let its worker end it
		t = podworkers.SyncPodCreate
	}
	if isStatic(pod) && a.namesakeRunning(pod) {
		a.mu.Lock()
		a.pendingStart[pod.UID] = true
		a.mu.Unlock()
		a.log.V(2).Info("Static pod waits for its previous version to stop", "pod", klog.KObj(pod), "podUID", pod.UID)
		return
	}
	if a.forgetPending(pod.UID) {
		t = podworkers.SyncPodCreate
	}
	a.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: t, Pod: pod, MirrorPod: a.mirrorOf(pod)})
}

func (a *Agent) mirrorOf(pod *corev1.Pod) *corev1.Pod {
	if !isStatic(pod) {
		return nil
	}
	return a.registry.MirrorFor(pod)
}

// namesakeRunning reports whether a pod with the same namespace and name but
// another UID may still have running containers.
func (a *Agent) namesakeRunning(pod *corev1.Pod) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for uid, other := range a.started {
		if uid != pod.UID && other == fullName(pod) && a.workers.CouldHaveRunningContainers(uid) {
			return true
		}
	}
	a.started[pod.UID] = fullName(pod)
	return false
}

// forgetPending forgets a static pod waiting for a namesake; it reports
// whether it waited.
func (a *Agent) forgetPending(uid types.UID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	was := a.pendingStart[uid]
	delete(a.pendingStart, uid)
	return was
}

func (a *Agent) handlePLEGEvent(e *pleg.Event) {
	defer a.releaseWaiting() // a container started or stopped: room may have changed
	if pod := a.registry.Get(e.ID); pod != nil && !a.isRejected(pod.UID) && !a.isPending(pod.UID) {
		a.log.V(4).Info("PLEG event", "pod", klog.KObj(pod), "event", e.Type, "container", e.Data)
		a.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodSync, Pod: pod, MirrorPod: a.mirrorOf(pod)})
	}
}

// syncDue syncs the pods whose resync is due and those past their active
// deadline (the kubelet's pod sync loop handlers), and retries pending
// static pods.
func (a *Agent) syncDue() {
	work := a.queue.GetWork()
	due := make(map[types.UID]bool, len(work))
	for _, uid := range work {
		due[uid] = true
	}
	deadline := activeDeadline{statuses: a.statuses, clk: a.clk}
	for _, pod := range a.registry.List() {
		if !due[pod.UID] && deadline.pastDeadline(pod) && !a.workers.IsPodKnownTerminated(pod.UID) {
			due[pod.UID] = true
			work = append(work, pod.UID)
		}
	}
	for _, uid := range work {
		if pod := a.registry.Get(uid); pod != nil && !a.isPending(uid) {
			a.startOrUpdate(pod, podworkers.SyncPodSync)
		}
	}
	a.mu.Lock()
	var pending []types.UID
	for uid := range a.pendingStart {
		pending = append(pending, uid)
	}
	a.mu.Unlock()
	for _, uid := range pending {
		if pod := a.registry.Get(uid); pod != nil {
			a.startOrUpdate(pod, podworkers.SyncPodCreate)
		} else {
			a.forgetPending(uid)
		}
	}
	a.releaseWaiting()
}

// isPending reports whether a pod has no worker yet because it waits: for
// a static namesake to stop, or at the start gate.
func (a *Agent) isPending(uid types.UID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pendingStart[uid] || a.waitingLocked(uid)
}

func isStatic(pod *corev1.Pod) bool {
	src := pod.Annotations[sources.AnnotationSource]
	return src != "" && src != sources.APIServerSource
}

func fullName(pod *corev1.Pod) string {
	return pod.Name + "_" + pod.Namespace
}
