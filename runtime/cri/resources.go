package cri

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodekit/nodekit/internal/qos"
)

// The kubelet's cpu and oom_score_adj constants (pkg/kubelet/cm and
// pkg/kubelet/qos).
const (
	minShares      = 2
	maxShares      = 262144
	sharesPerCPU   = 1024
	milliCPUPerCPU = 1000
	// quotaPeriod is the CFS period in microseconds (100ms).
	quotaPeriod = 100000
	// minQuota is the smallest CFS quota the kernel takes (1ms).
	minQuota = 1000

	guaranteedOOMScoreAdj = -997
	bestEffortOOMScoreAdj = 1000
	// systemNodeCritical is the priority class whose pods get the
	// Guaranteed oom_score_adj whatever their resources.
	systemNodeCritical = "system-node-critical"
	// systemCriticalPriority is the lowest priority of a critical pod.
	systemCriticalPriority = 2 * 1000000000
	// annotationSource and annotationMirror mark static and mirror pods
	// (sources.AnnotationSource and sources.AnnotationMirror).
	annotationSource = "kubernetes.io/config.source"
	annotationMirror = "kubernetes.io/config.mirror"
	apiServerSource  = "api"
)

// milliCPUToShares turns a cpu request into cpu.shares: 1024 per cpu,
// within [2, 262144]; no request is the minimum.
func milliCPUToShares(milliCPU int64) int64 {
	shares := milliCPU * sharesPerCPU / milliCPUPerCPU
	return min(max(shares, minShares), maxShares)
}

// milliCPUToQuota turns a cpu limit into a CFS quota for period (both in
// microseconds), at least 1ms; no limit is 0 (unlimited).
func milliCPUToQuota(milliCPU, period int64) int64 {
	if milliCPU == 0 {
		return 0
	}
	return max(milliCPU*period/milliCPUPerCPU, minQuota)
}

// linuxResources is the kubelet's calculateLinuxResources: shares from the
// request (or the limit when there is no request), the quota from the
// limit, and the memory limit.
func linuxResources(cpuRequest, cpuLimit, memLimit *resource.Quantity, cfsQuota bool) *runtimeapi.LinuxContainerResources {
	out := &runtimeapi.LinuxContainerResources{}
	if cpuRequest == nil && cpuLimit != nil {
		out.CpuShares = milliCPUToShares(cpuLimit.MilliValue())
	} else {
		out.CpuShares = milliCPUToShares(cpuRequest.MilliValue())
	}
	if v := memLimit.Value(); v != 0 {
		out.MemoryLimitInBytes = v
	}
	if cfsQuota {
		out.CpuPeriod = quotaPeriod
		out.CpuQuota = milliCPUToQuota(cpuLimit.MilliValue(), quotaPeriod)
	}
	return out
}

// podCgroupResources is the kubelet's ResourceConfigForPod
// (helpers_linux.go) without huge pages: cpu shares from the pod's cpu
// requests (overhead included); for a Guaranteed pod its cpu quota and
// memory limit; for a Burstable pod the cpu quota when every container
// limits cpu and the memory limit when every container limits memory (or
// the pod sets pod-level limits); a BestEffort pod gets the minimum shares
// only.
func podCgroupResources(pod *corev1.Pod, class corev1.PodQOSClass, cfsQuota bool) *cgroupResources {
	if class == corev1.PodQOSBestEffort {
		return &cgroupResources{CPUShares: ptrTo(int64(minShares))}
	}
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	lim := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
	cpuLimited, memLimited := true, true
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			cpuLimited = cpuLimited && !list[i].Resources.Limits.Cpu().IsZero()
			memLimited = memLimited && !list[i].Resources.Limits.Memory().IsZero()
		}
	}
	if resourcehelper.IsPodLevelResourcesSet(pod) {
		cpuLimited = cpuLimited || !pod.Spec.Resources.Limits.Cpu().IsZero()
		memLimited = memLimited || !pod.Spec.Resources.Limits.Memory().IsZero()
	}
	shares := milliCPUToShares(req.Cpu().MilliValue())
	quota, period := milliCPUToQuota(lim.Cpu().MilliValue(), quotaPeriod), int64(quotaPeriod)
	if !cfsQuota || quota == 0 {
		quota = -1
	}
	memory := lim.Memory().Value()
	res := &cgroupResources{CPUShares: &shares}
	if class == corev1.PodQOSGuaranteed || cpuLimited {
		res.CPUQuota, res.CPUPeriod = &quota, &period
	}
	if (class == corev1.PodQOSGuaranteed || memLimited) && memory > 0 {
		res.Memory = &memory
	}
	return res
}

// containerResources is the CRI Linux resources of one container: its
// requests and limits (a pod-level limit stands in for a missing container
// limit) and the oom_score_adj of its QoS class.
func (m *Manager) containerResources(pod *corev1.Pod, c *corev1.Container) *runtimeapi.LinuxContainerResources {
	var cpuRequest *resource.Quantity
	if _, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		cpuRequest = c.Resources.Requests.Cpu()
	}
	cpuLimit, memLimit := c.Resources.Limits.Cpu(), c.Resources.Limits.Memory()
	if resourcehelper.IsPodLevelResourcesSet(pod) {
		if cpuLimit.IsZero() {
			cpuLimit = pod.Spec.Resources.Limits.Cpu()
		}
		if memLimit.IsZero() {
			memLimit = pod.Spec.Resources.Limits.Memory()
		}
	}
	if cpuRequest == nil {
		cpuRequest = cpuLimit
	}
	out := linuxResources(cpuRequest, cpuLimit, memLimit, !m.cfg.DisableCPUCFSQuota)
	out.OomScoreAdj = oomScoreAdj(pod, c, m.host.memoryCapacity(m.cfg.NodeMemoryBytes))
	return out
}

// sandboxResources is what the kubelet sends with a sandbox: the pod's
// aggregated requests and limits without overhead, and the overhead.
func (m *Manager) sandboxResources(pod *corev1.Pod) (resources, overhead *runtimeapi.LinuxContainerResources) {
	opts := resourcehelper.PodResourcesOptions{ExcludeOverhead: true}
	req := resourcehelper.PodRequests(pod, opts)
	lim := resourcehelper.PodLimits(pod, opts)
	var cpuRequest *resource.Quantity
	if _, ok := req[corev1.ResourceCPU]; ok {
		cpuRequest = req.Cpu()
	}
	cfsQuota := !m.cfg.DisableCPUCFSQuota
	resources = linuxResources(cpuRequest, lim.Cpu(), lim.Memory(), cfsQuota)
	overhead = &runtimeapi.LinuxContainerResources{}
	if o := pod.Spec.Overhead; o != nil {
		overhead = linuxResources(o.Cpu(), o.Cpu(), o.Memory(), cfsQuota)
	}
	return resources, overhead
}

// oomScoreAdj is the kubelet's GetContainerOOMScoreAdjust: -997 for
// Guaranteed and node-critical pods, 1000 for BestEffort, and for Burstable
// 1000 minus the container's share of the node's memory in thousandths,
// within [3, 999] (a sidecar never above the smallest regular container).
func oomScoreAdj(pod *corev1.Pod, c *corev1.Container, memoryCapacity int64) int64 {
	if isNodeCritical(pod) {
		return guaranteedOOMScoreAdj
	}
	switch qos.PodClass(pod) {
	case corev1.PodQOSGuaranteed:
		return guaranteedOOMScoreAdj
	case corev1.PodQOSBestEffort:
		return bestEffortOOMScoreAdj
	}
	if memoryCapacity <= 0 {
		return bestEffortOOMScoreAdj - 1
	}
	var extra int64 // the pod-level request left over, per container
	if resourcehelper.IsPodLevelRequestsSet(pod) {
		extra = remainingPodMemoryPerContainer(pod)
	}
	adj := 1000 - 1000*(c.Resources.Requests.Memory().Value()+extra)/memoryCapacity
	if isSidecar(pod, c) && len(pod.Spec.Containers) > 0 {
		minReq := pod.Spec.Containers[0].Resources.Requests.Memory().Value()
		for i := range pod.Spec.Containers[1:] {
			minReq = min(minReq, pod.Spec.Containers[i+1].Resources.Requests.Memory().Value())
		}
		adj = min(adj, 1000-1000*(minReq+extra)/memoryCapacity)
	}
	switch {
	case adj < 1000+guaranteedOOMScoreAdj:
		return 1000 + guaranteedOOMScoreAdj
	case adj == bestEffortOOMScoreAdj:
		return adj - 1
	}
	return adj
}

// remainingPodMemoryPerContainer spreads the part of a pod-level memory
// request that its containers do not request over all its containers.
func remainingPodMemoryPerContainer(pod *corev1.Pod) int64 {
	podReq := pod.Spec.Resources.Requests.Memory()
	n := int64(len(pod.Spec.Containers) + len(pod.Spec.InitContainers))
	if podReq.IsZero() || n == 0 {
		return 0
	}
	containers := resourcehelper.AggregateContainerRequests(pod, resourcehelper.PodResourcesOptions{})
	return max(podReq.Value()-containers.Memory().Value(), 0) / n
}

// isSidecar reports whether c is one of the pod's restartable init
// containers.
func isSidecar(pod *corev1.Pod, c *corev1.Container) bool {
	if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		return false
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == c.Name {
			return true
		}
	}
	return false
}

// isNodeCritical is the kubelet's IsNodeCriticalPod: a static, mirror or
// critical-priority pod of the system-node-critical class.
func isNodeCritical(pod *corev1.Pod) bool {
	if pod.Spec.PriorityClassName != systemNodeCritical {
		return false
	}
	src := pod.Annotations[annotationSource]
	_, mirror := pod.Annotations[annotationMirror]
	critical := pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPriority
	return (src != "" && src != apiServerSource) || mirror || critical
}

// hostFacts are facts about the machine read once, when first needed.
type hostFacts struct {
	sysRoot string // prefixes /proc and /sys paths; tests point it elsewhere

	memOnce sync.Once
	mem     int64

	maskOnce sync.Once
	masked   []string
}

// newHostFacts reads the real machine.
func newHostFacts() *hostFacts { return &hostFacts{sysRoot: "/"} }

// maskedPaths returns the default masked paths; the caller gets a copy.
func (h *hostFacts) maskedPaths() []string {
	h.maskOnce.Do(func() {
		h.masked = append([]string(nil), staticMaskedPaths[:]...)
		data, _ := os.ReadFile(filepath.Join(h.sysRoot, "sys/devices/system/cpu/possible"))
		for _, cpu := range parseCPUList(strings.TrimSpace(string(data))) {
			p := fmt.Sprintf("/sys/devices/system/cpu/cpu%d/thermal_throttle", cpu)
			if _, err := os.Stat(filepath.Join(h.sysRoot, p)); err == nil {
				h.masked = append(h.masked, p)
			}
		}
	})
	return append([]string(nil), h.masked...)
}

// parseCPUList parses a kernel CPU list such as "0-3,8"; what it cannot
// parse is skipped.
func parseCPUList(s string) []int {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 4096 {
				continue
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out
}

// memoryCapacity returns configured when it is set, else MemTotal (0 when
// it cannot be read: Burstable containers then get 999).
func (h *hostFacts) memoryCapacity(configured int64) int64 {
	if configured > 0 {
		return configured
	}
	h.memOnce.Do(func() {
		data, err := os.ReadFile(filepath.Join(h.sysRoot, "proc/meminfo"))
		if err == nil {
			h.mem, _ = parseMemTotal(data)
		}
	})
	return h.mem
}

// parseMemTotal reads MemTotal (in kB) from /proc/meminfo, in bytes.
func parseMemTotal(data []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse MemTotal: %w", err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no MemTotal line")
}
