package agent

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"
)

// Rejection reasons, as the kubelet names them.
const (
	reasonOutOfPods = "OutOfpods"
	// reasonOutOfPrefix prefixes the resource a pod did not fit in:
	// OutOfcpu, OutOfmemory, OutOfephemeral-storage.
	reasonOutOfPrefix = "OutOf"
)

// NodeResources reports what the node can give pods, for admission: a pod
// whose requests do not fit in what the pods already admitted leave of it is
// rejected. nodekit adapts the node status reporter's MachineInfo. It must
// be safe for concurrent use.
type NodeResources interface {
	// Allocatable returns the node's allocatable resources (cpu, memory,
	// ephemeral-storage); a resource it does not list is not checked.
	Allocatable() (corev1.ResourceList, error)
}

// admittedResources are the resources admission checks, in its order.
var admittedResources = [...]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage}

// admit decides whether a new pod may run on this node, given how many
// pods are active: whether the node still has room under MaxPods and, with
// NodeResources, whether the pod's requests fit in the node's allocatable
// resources beside the active pods' requests, as the kubelet's resource
// predicate does.
func (a *Agent) admit(pod *corev1.Pod, active int) (reason, message string, ok bool) {
	if active >= a.cfg.MaxPods {
		return reasonOutOfPods, fmt.Sprintf(
			"Node didn't have enough resource: pods, requested: 1, used: %d, capacity: %d", active, a.cfg.MaxPods), false
	}
	if a.node == nil {
		return "", "", true
	}
	alloc, err := a.node.Allocatable()
	if err != nil {
		// As the kubelet with an unreadable machine: admit, and say so.
		a.log.Error(err, "Cannot read the node's allocatable resources; admitting pod without a resource check", "pod", klog.KObj(pod))
		return "", "", true
	}
	requested := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	var used corev1.ResourceList
	for _, name := range admittedResources {
		capacity, ok := alloc[name]
		req, asks := requested[name]
		if !ok || !asks || req.IsZero() {
			continue
		}
		if used == nil {
			used = a.usedResources(pod.UID)
		}
		u := used[name]
		if value(name, req) > value(name, capacity)-value(name, u) {
			return reasonOutOfPrefix + string(name), fmt.Sprintf(
				"Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
				name, value(name, req), value(name, u), value(name, capacity)), false
		}
	}
	return "", "", true
}

// value is a quantity as the kubelet's admission message counts it:
// millicores for cpu, units (bytes) otherwise.
func value(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// usedResources sums the requests of the active pods other than self: the
// pods handed to workers that have not finished, and the static pods
// waiting to start.
func (a *Agent) usedResources(self types.UID) corev1.ResourceList {
	a.mu.Lock()
	uids := make([]types.UID, 0, len(a.started)+len(a.pendingStart))
	for uid := range a.started {
		uids = append(uids, uid)
	}
	for uid := range a.pendingStart {
		if _, dup := a.started[uid]; !dup {
			uids = append(uids, uid)
		}
	}
	a.mu.Unlock()
	used := corev1.ResourceList{}
	for _, uid := range uids {
		if uid == self || a.workers.IsPodKnownTerminated(uid) {
			continue
		}
		if st, ok := a.statuses.GetPodStatus(uid); ok && isTerminalPhase(st.Phase) {
			continue
		}
		p := a.registry.Get(uid)
		if p == nil {
			continue
		}
		for name, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			sum := used[name]
			sum.Add(q)
			used[name] = sum
		}
	}
	return used
}

// activePods counts the pods handed to workers that have not finished, and
// the static pods waiting to start.
func (a *Agent) activePods() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for uid := range a.started {
		if a.workers.IsPodKnownTerminated(uid) {
			continue
		}
		if st, ok := a.statuses.GetPodStatus(uid); ok && isTerminalPhase(st.Phase) {
			continue
		}
		n++
	}
	return n + len(a.pendingStart)
}

// reject records a pod that will not run: phase Failed with the reason.
func (a *Agent) reject(pod *corev1.Pod, reason, message string) {
	a.log.Info("Pod rejected", "pod", klog.KObj(pod), "reason", reason, "message", message)
	a.mu.Lock()
	a.rejected[pod.UID] = true
	a.mu.Unlock()
	st := pod.Status.DeepCopy()
	st.Phase = corev1.PodFailed
	st.Reason = reason
	st.Message = "Pod was rejected: " + message
	a.statuses.SetPodStatus(pod, st)
}

func (a *Agent) isRejected(uid types.UID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rejected[uid]
}
