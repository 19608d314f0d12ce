package cri

import (
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/nodekit/nodekit/internal/qos"
)

// podCgroups is the manager's pod cgroup setup: which cgroup manager, under
// which root. It is chosen when first needed (it reads the cgroup mounts),
// so that NewManager does no I/O.
type podCgroups struct {
	root    CgroupName // nil: pod cgroups are off
	systemd bool
	fsRoot  string // where the hierarchies are mounted; tests change it
	log     logr.Logger

	once sync.Once
	mgr  cgroupManager
}

// newPodCgroups returns the setup for cfg (with defaults filled in).
func newPodCgroups(cfg Config, log logr.Logger) *podCgroups {
	p := &podCgroups{systemd: cfg.CgroupDriver == CgroupDriverSystemd, fsRoot: DefaultCgroupfsRoot, log: log}
	if cfg.CgroupParent != "" {
		p.root = ParseCgroupfsName(cfg.CgroupParent)
	}
	return p
}

// manager returns the cgroup manager, choosing it on first use: cgroupfs
// on cgroup v1 manages cgroups itself; the systemd driver and cgroup v2
// only name them.
func (p *podCgroups) manager() cgroupManager {
	p.once.Do(func() {
		switch {
		case p.systemd:
			p.mgr = namesOnly{systemd: true}
			p.log.Info("pod cgroups use systemd names; the runtime creates them without pod-level limits")
		case isCgroupV2(p.fsRoot):
			p.mgr = namesOnly{}
			p.log.Info("pod cgroups on cgroup v2 are created by the runtime without pod-level limits", "cgroupfsRoot", p.fsRoot)
		default:
			p.mgr = cgroupV1{root: p.fsRoot}
		}
	})
	return p.mgr
}

// use replaces the cgroup manager; for tests.
func (p *podCgroups) use(mgr cgroupManager) {
	p.once.Do(func() {})
	p.mgr = mgr
}

// enabled reports whether the manager keeps pod cgroups.
func (p *podCgroups) enabled() bool { return p.root != nil }

// parentOf is the CgroupParent of the pod's sandbox, "" when pod cgroups
// are off.
func (p *podCgroups) parentOf(pod *corev1.Pod) string {
	if !p.enabled() {
		return ""
	}
	return p.manager().Name(podCgroupName(p.root, qos.PodClass(pod), pod.UID))
}

// ensure creates the pod's cgroup with the pod's limits (and, for a
// BestEffort pod, gives its QoS parent the minimum cpu shares, as the
// kubelet does). It does nothing when pod cgroups are off.
func (p *podCgroups) ensure(pod *corev1.Pod, cfsQuota bool) error {
	if !p.enabled() {
		return nil
	}
	mgr := p.manager()
	class := qos.PodClass(pod)
	if class == corev1.PodQOSBestEffort {
		shares := int64(minShares)
		if err := mgr.Ensure(qosCgroupName(p.root, class), &cgroupResources{CPUShares: &shares}); err != nil {
			return err
		}
	}
	name := podCgroupName(p.root, class, pod.UID)
	res := podCgroupResources(pod, class, cfsQuota)
	if err := mgr.Ensure(name, res); err != nil {
		return err
	}
	p.log.V(4).Info("pod cgroup ready", "cgroup", mgr.Name(name), "resources", res.String())
	return nil
}

// remove removes the pod's cgroup wherever its class put it. It does
// nothing when pod cgroups are off.
func (p *podCgroups) remove(uid types.UID) error {
	if !p.enabled() {
		return nil
	}
	var errs []error
	for _, name := range allPodCgroupNames(p.root, uid) {
		if err := p.manager().Remove(name); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove cgroup of pod %s: %w", uid, err)
	}
	return nil
}

// podCgroupResources is the kubelet's ResourceConfigForPod: cpu shares from
// the pod's cpu requests; for a Guaranteed pod its cpu quota and memory
// limit; for a Burstable pod the cpu quota when every container limits
// cpu and the memory limit when every container limits memory (or the pod
// sets pod-level limits); a BestEffort pod gets the minimum shares only.
func podCgroupResources(pod *corev1.Pod, class corev1.PodQOSClass, cfsQuota bool) *cgroupResources {
	if class == corev1.PodQOSBestEffort {
		shares := int64(minShares)
		return &cgroupResources{CPUShares: &shares}
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

// ensurePodCgroup creates the pod's cgroup with its limits before its
// sandbox runs, after marking the pod's directory as this manager's, so
// that GarbageCollect removes the cgroup with the directory. It does
// nothing when pod cgroups are off.
func (m *Manager) ensurePodCgroup(pod *corev1.Pod) error {
	if !m.cgroups.enabled() {
		return nil
	}
	if _, err := m.ensurePodDir(pod.UID); err != nil {
		return fmt.Errorf("pod directory: %w", err)
	}
	return m.cgroups.ensure(pod, !m.cfg.DisableCPUCFSQuota)
}
