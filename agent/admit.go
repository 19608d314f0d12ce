package agent

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"

	"github.com/nodekit/nodekit/agent/admission"
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

// DefaultAdmission returns the kubelet's admission handlers in the
// kubelet's order: with a node that is a PressureAdmitter, the node's
// pressure must allow the pod (PressureAdmission); its sysctls must be
// allowed (SysctlAdmission); its OS must be the node's (OSAdmission); the
// node must still have room under MaxPods
// (PodCountAdmission); and its requests must fit in the node's allocatable
// resources beside the other pods', every extended resource it requests
// (nvidia.com/gpu) being one the node has, with room for it
// (ResourceAdmission). node may be nil: no pressure and no resource check
// of cpu, memory or ephemeral-storage. The agent.Module appends the fx
// value group "admission" to it.
func DefaultAdmission(node NodeResources, cfg Config, log logr.Logger) admission.Chain {
	cfg = cfg.withDefaults()
	log = log.WithName("admission")
	var chain admission.Chain
	if pa, ok := node.(PressureAdmitter); ok {
		chain = append(chain, PressureAdmission{Node: pa})
	}
	return append(chain,
		NewSysctlAdmission(cfg.AllowedUnsafeSysctls, log),
		OSAdmission{},
		PodCountAdmission{MaxPods: cfg.MaxPods},
		ResourceAdmission{Node: node, Log: log},
	)
}

// PressureAdmission is the kubelet's eviction admit handler: admission
// under node pressure, as Node says.
type PressureAdmission struct {
	// Node answers; it must be safe for concurrent use.
	Node PressureAdmitter
}

// Admit implements admission.Handler.
func (h PressureAdmission) Admit(attrs *admission.Attributes) admission.Result {
	return verdict(h.Node.AdmitUnderPressure(attrs.Pod))
}

// PodCountAdmission refuses a pod with OutOfpods when MaxPods pods are
// already active.
type PodCountAdmission struct {
	// MaxPods is the most pods the node runs.
	MaxPods int
}

// Admit implements admission.Handler.
func (h PodCountAdmission) Admit(attrs *admission.Attributes) admission.Result {
	if active := len(attrs.OtherPods); active >= h.MaxPods {
		return admission.Refused(reasonOutOfPods, fmt.Sprintf(
			"Node didn't have enough resource: pods, requested: 1, used: %d, capacity: %d", active, h.MaxPods))
	}
	return admission.Admitted()
}

// ResourceAdmission is the kubelet's resource predicate: a pod's requests
// must fit in the node's allocatable resources beside the other pods'
// requests, with reason OutOf<resource> when they do not. Of cpu, memory
// and ephemeral-storage, one the node does not list is not checked; every
// other resource the node does not list has capacity 0: huge pages
// (hugepages-2Mi), kubernetes.io/ resources, attachable-volumes-* (the
// scheduler's scalar resources) and extended resources (nodekit has no
// device plugins). When the node's resources cannot be read the pod is
// admitted, and the error logged, as the kubelet does.
type ResourceAdmission struct {
	// Node gives the allocatable resources; nil checks extended resources
	// only.
	Node NodeResources
	// Log receives unreadable-node errors.
	Log logr.Logger
}

// Admit implements admission.Handler.
func (h ResourceAdmission) Admit(attrs *admission.Attributes) admission.Result {
	pod := attrs.Pod
	requested := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	alloc := corev1.ResourceList{}
	if h.Node != nil {
		var err error
		if alloc, err = h.Node.Allocatable(); err != nil {
			// As the kubelet with an unreadable machine: admit, and say so.
			h.Log.Error(err, "Cannot read the node's allocatable resources; admitting pod without a resource check", "pod", klog.KObj(pod))
			return admission.Admitted()
		}
	}
	fits := &resourceFit{others: attrs.OtherPods, requested: requested}
	for _, name := range admittedResources {
		if capacity, listed := alloc[name]; listed {
			if r := fits.check(name, capacity); !r.Admit {
				return r
			}
		}
	}
	for _, name := range scalarResources(requested) {
		if r := fits.check(name, alloc[name]); !r.Admit {
			return r
		}
	}
	return admission.Admitted()
}

// verdict turns a (reason, message, ok) check into a Result.
func verdict(reason, message string, ok bool) admission.Result {
	if ok {
		return admission.Admitted()
	}
	return admission.Refused(reason, message)
}

// resourceFit checks one pod's requests against the node, summing the
// other active pods' requests once, when first needed.
type resourceFit struct {
	others    []*corev1.Pod
	requested corev1.ResourceList
	used      corev1.ResourceList // nil until first needed
}

// check admits the pod's request of name when it fits in capacity beside
// what the other pods use, and refuses it with the kubelet's OutOf<name>
// reason and message when it does not.
func (f *resourceFit) check(name corev1.ResourceName, capacity resource.Quantity) admission.Result {
	req, asks := f.requested[name]
	if !asks || req.IsZero() {
		return admission.Admitted()
	}
	if f.used == nil {
		f.used = sumRequests(f.others)
	}
	u := f.used[name]
	if value(name, req) > value(name, capacity)-value(name, u) {
		return admission.Refused(reasonOutOfPrefix+string(name), fmt.Sprintf(
			"Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			name, value(name, req), value(name, u), value(name, capacity)))
	}
	return admission.Admitted()
}

// sumRequests adds up the pods' requests.
func sumRequests(pods []*corev1.Pod) corev1.ResourceList {
	used := corev1.ResourceList{}
	for _, p := range pods {
		for name, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			sum := used[name]
			sum.Add(q)
			used[name] = sum
		}
	}
	return used
}

// scalarResources lists, sorted, the requested resources other than cpu,
// memory and ephemeral-storage that the kubelet's fit check counts (the
// scheduler's scalar resources): extended resources (names outside the
// kubernetes.io domain, such as nvidia.com/gpu), huge pages of each size,
// resources prefixed kubernetes.io/ and attachable-volumes-*.
func scalarResources(requested corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for name := range requested {
		s := string(name)
		if isExtendedResourceName(name) || strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) ||
			strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) || strings.HasPrefix(s, corev1.ResourceAttachableVolumesPrefix) {
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

// activePodList returns the active pods other than self: the pods handed
// to workers that have not finished, the static pods waiting for a
// namesake, and the admitted pods waiting at the start gate. The pods are
// the registry's: read-only.
func (a *Agent) activePodList(self types.UID) []*corev1.Pod {
	a.mu.Lock()
	uids := make([]types.UID, 0, len(a.started)+len(a.pendingStart)+len(a.waiting))
	for uid := range a.started {
		uids = append(uids, uid)
	}
	for uid := range a.pendingStart {
		if _, dup := a.started[uid]; !dup {
			uids = append(uids, uid)
		}
	}
	for _, p := range a.waiting {
		uids = append(uids, p.UID)
	}
	a.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(uids))
	for _, uid := range uids {
		if uid == self || a.workers.IsPodKnownTerminated(uid) {
			continue
		}
		if st, ok := a.statuses.GetPodStatus(uid); ok && isTerminalPhase(st.Phase) {
			continue
		}
		if p := a.registry.Get(uid); p != nil {
			out = append(out, p)
		}
	}
	return out
}

// reject records a pod that will not run: phase Failed with the reason,
// and a Warning event, as the kubelet's rejectPod.
func (a *Agent) reject(pod *corev1.Pod, reason, message string) {
	a.log.Info("Pod rejected", "pod", klog.KObj(pod), "reason", reason, "message", message)
	if a.events != nil {
		a.events.Eventf(pod, corev1.EventTypeWarning, reason, "%s", message)
	}
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
