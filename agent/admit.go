package agent

import (
	"fmt"
	goruntime "runtime"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
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
	// ephemeral-storage, and any extended resources); of cpu, memory and
	// ephemeral-storage, one it does not list is not checked, while an
	// extended resource it does not list has capacity 0.
	Allocatable() (corev1.ResourceList, error)
}

// PressureAdmitter is an optional capability of NodeResources, found by
// type assertion: admission under node pressure, the kubelet's eviction
// admit handler, which runs before every other check. nodekit's adapts
// the eviction manager (MemoryPressure refuses BestEffort pods,
// DiskPressure and PIDPressure every pod that is not critical).
type PressureAdmitter interface {
	// AdmitUnderPressure returns ok, or the reason and message of a
	// refusal. It must be safe for concurrent use.
	AdmitUnderPressure(pod *corev1.Pod) (reason, message string, ok bool)
}

// admittedResources are the resources admission checks, in its order.
var admittedResources = [...]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage}

// admit decides whether a new pod may run on this node, given how many
// pods are active, in the kubelet's order of admission handlers: with a
// PressureAdmitter, the node's pressure must allow it; its sysctls must be allowed; the node must still have room under MaxPods;
// with NodeResources, its requests must fit in the node's allocatable
// resources beside the active pods' requests, as the kubelet's resource
// predicate does; and every extended resource it requests (nvidia.com/gpu)
// must be one the node has, with room for it.
func (a *Agent) admit(pod *corev1.Pod, active int) (reason, message string, ok bool) {
	if pa, is := a.node.(PressureAdmitter); is {
		if reason, message, ok := pa.AdmitUnderPressure(pod); !ok {
			return reason, message, false
		}
	}
	if reason, message, ok := a.admitSysctls(pod); !ok {
		return reason, message, false
	}
	if reason, message, ok := admitOS(pod); !ok {
		return reason, message, false
	}
	if active >= a.cfg.MaxPods {
		return reasonOutOfPods, fmt.Sprintf(
			"Node didn't have enough resource: pods, requested: 1, used: %d, capacity: %d", active, a.cfg.MaxPods), false
	}
	requested := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	alloc := corev1.ResourceList{}
	if a.node != nil {
		var err error
		if alloc, err = a.node.Allocatable(); err != nil {
			// As the kubelet with an unreadable machine: admit, and say so.
			a.log.Error(err, "Cannot read the node's allocatable resources; admitting pod without a resource check", "pod", klog.KObj(pod))
			return "", "", true
		}
	}
	fits := &resourceFit{agent: a, pod: pod, requested: requested}
	for _, name := range admittedResources {
		if capacity, listed := alloc[name]; listed {
			if reason, message, ok := fits.check(name, capacity); !ok {
				return reason, message, false
			}
		}
	}
	for _, name := range extendedResources(requested) {
		// A resource the node does not have has capacity 0: nodekit has no
		// device plugins and no cluster-level resources, so the pod could
		// never get it.
		if reason, message, ok := fits.check(name, alloc[name]); !ok {
			return reason, message, false
		}
	}
	return "", "", true
}

// admitSysctls is the kubelet's sysctl admission handler.
func (a *Agent) admitSysctls(pod *corev1.Pod) (reason, message string, ok bool) {
	if pod.Spec.SecurityContext == nil || len(pod.Spec.SecurityContext.Sysctls) == 0 {
		return "", "", true
	}
	w, err := a.sysctls()
	if err != nil {
		return reasonSysctlForbidden, fmt.Sprintf("forbidden sysctl: invalid allowed unsafe sysctls: %v", err), false
	}
	return w.admit(pod)
}

// admitOS is the OS part of the kubelet's predicate admission, which runs
// before its resource checks: a pod whose kubernetes.io/os label (the
// kubelet reads the pod's labels, not its nodeSelector) names another OS
// than the node's, or whose spec.os.name is not the node's OS, is refused.
// The node's OS is the agent's runtime.GOOS, as the kubelet takes it.
func admitOS(pod *corev1.Pod) (reason, message string, ok bool) {
	if os, set := pod.Labels[corev1.LabelOSStable]; set && os != goruntime.GOOS {
		return "PodOSSelectorNodeLabelDoesNotMatch", "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label", false
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != goruntime.GOOS {
		return "PodOSNotSupported", "Failed to admit pod as the OS field doesn't match node OS", false
	}
	return "", "", true
}

// resourceFit checks one pod's requests against the node, summing the
// other active pods' requests once, when first needed.
type resourceFit struct {
	agent     *Agent
	pod       *corev1.Pod
	requested corev1.ResourceList
	used      corev1.ResourceList // nil until first needed
}

// check reports whether the pod's request of name fits in capacity beside
// what the other pods use, with the kubelet's OutOf<name> reason and
// message when it does not.
func (f *resourceFit) check(name corev1.ResourceName, capacity resource.Quantity) (reason, message string, ok bool) {
	req, asks := f.requested[name]
	if !asks || req.IsZero() {
		return "", "", true
	}
	if f.used == nil {
		f.used = f.agent.usedResources(f.pod.UID)
	}
	u := f.used[name]
	if value(name, req) > value(name, capacity)-value(name, u) {
		return reasonOutOfPrefix + string(name), fmt.Sprintf(
			"Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			name, value(name, req), value(name, u), value(name, capacity)), false
	}
	return "", "", true
}

// extendedResources lists, sorted, the extended resources among requested:
// names outside the kubernetes.io domain, such as nvidia.com/gpu.
func extendedResources(requested corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for name := range requested {
		if isExtendedResourceName(name) {
			out = append(out, name)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// isExtendedResourceName is the API's definition: a valid qualified name
// with a domain other than kubernetes.io, not a quota "requests." name.
func isExtendedResourceName(name corev1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+s)) == 0
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
