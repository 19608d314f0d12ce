package cri

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/nodekit/nodekit/internal/qos"
)

// podCgroups is the manager's pod cgroup setup: the kubelet's kubepods,
// kubepods/burstable, kubepods/besteffort and pod<uid> cgroups under the
// root. The cgroup manager (driver and version) is chosen when first
// needed (it reads the cgroup mounts), so that NewManager does no I/O.
type podCgroups struct {
	root         CgroupName // nil: pod cgroups are off
	perQOS       bool       // false: sandboxes go directly under root
	systemd      bool
	pidsLimit    int64        // > 0: each pod's process limit
	fsRoot       string       // where the hierarchies are mounted; tests change it
	hugePagesDir string       // lists the host's huge page sizes; tests change it
	memory       func() int64 // the node's memory capacity
	cpus         int          // the node's logical CPUs
	log          logr.Logger

	once      sync.Once
	mgr       cgroupManager
	v2        bool
	hugePages []int64 // the host's huge page sizes in bytes
	initErr   error

	// mu guards the QoS cgroups' state: whether they exist and the cpu
	// requests of the Burstable pods with a cgroup.
	mu        sync.Mutex
	qosReady  bool
	burstable map[types.UID]int64
}

// newPodCgroups returns the setup for cfg (with defaults filled in).
func newPodCgroups(cfg Config, log logr.Logger) *podCgroups {
	host := newHostFacts()
	p := &podCgroups{
		perQOS:       cfg.cgroupsPerQOS(),
		systemd:      cfg.CgroupDriver == CgroupDriverSystemd,
		pidsLimit:    cfg.PodPidsLimit,
		fsRoot:       DefaultCgroupfsRoot,
		hugePagesDir: DefaultHugePagesDir,
		memory:       func() int64 { return host.memoryCapacity(cfg.NodeMemoryBytes) },
		cpus:         goruntime.NumCPU(),
		log:          log,
		burstable:    map[types.UID]int64{},
	}
	if cfg.CgroupParent != "" {
		p.root = ParseCgroupfsName(cfg.CgroupParent)
	}
	return p
}

// manager returns the cgroup manager, choosing it on first use: cgroupfs
// on cgroup v1 or v2 (a unified mount at fsRoot), or systemd over D-Bus
// with the cgroupfs files of the same version. It also reads the host's
// huge page sizes.
func (p *podCgroups) manager() (cgroupManager, error) {
	p.once.Do(func() {
		p.v2 = isCgroupV2(p.fsRoot)
		var fsMgr interface {
			cgroupManager
			ensureAt(string, *cgroupResources) error
			removeAt(string) error
		} = cgroupV1{root: p.fsRoot}
		if p.v2 {
			fsMgr = cgroupV2{root: p.fsRoot}
		}
		p.mgr = fsMgr
		if p.systemd {
			p.mgr = &systemdCgroups{fs: fsMgr, v2: p.v2, dial: dialSystemd}
		}
		p.hugePages, p.initErr = hostHugePageSizes(p.hugePagesDir)
		p.log.V(2).Info("pod cgroups ready", "cgroupRoot", p.root.ToCgroupfs(), "cgroupV2", p.v2, "systemd", p.systemd)
	})
	return p.mgr, p.initErr
}

// use replaces the cgroup manager (on cgroup v1, with no huge pages);
// for tests.
func (p *podCgroups) use(mgr cgroupManager) { p.useHost(mgr, false) }

// useHost replaces the cgroup manager, the cgroup version and the host's
// huge page sizes; for tests.
func (p *podCgroups) useHost(mgr cgroupManager, v2 bool, hugePages ...int64) {
	p.once.Do(func() {})
	p.mgr, p.v2, p.hugePages = mgr, v2, hugePages
}

// enabled reports whether the manager keeps pod cgroups.
func (p *podCgroups) enabled() bool { return p.root != nil && p.perQOS }

// parentOf is the CgroupParent of the pod's sandbox: its pod cgroup, the
// root itself without QoS cgroups, "" (the runtime's default) without a
// root.
func (p *podCgroups) parentOf(pod *corev1.Pod) string {
	if p.root == nil {
		return ""
	}
	mgr, _ := p.manager() // an error fails ensure, before any sandbox
	if !p.perQOS {
		return mgr.Name(p.root)
	}
	return mgr.Name(podCgroupName(p.root, qos.PodClass(pod), pod.UID))
}

// ensure makes the pod's cgroup with the pod's limits, as the kubelet's
// syncPod does for a pod without one: the QoS cgroups first, updated
// for the pod (UpdateQOSCgroups), then the pod's (pod_container_manager
// EnsureExists). It does nothing when pod cgroups are off.
func (p *podCgroups) ensure(pod *corev1.Pod, cfsQuota bool) error {
	if !p.enabled() {
		return nil
	}
	mgr, err := p.manager()
	if err != nil {
		return err
	}
	class := qos.PodClass(pod)
	if err := p.updateQOS(mgr, pod.UID, burstableRequest(pod, class)); err != nil {
		return err
	}
	name := podCgroupName(p.root, class, pod.UID)
	res := podCgroupResources(pod, class, cfsQuota)
	res.HugePageLimit = podHugePageLimits(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}), p.hugePages)
	if p.pidsLimit > 0 {
		res.PidsLimit = ptrTo(p.pidsLimit)
	}
	if err := mgr.Ensure(name, res); err != nil {
		return err
	}
	p.log.V(4).Info("pod cgroup ready", "cgroup", mgr.Name(name), "resources", res.String())
	return nil
}

// observe counts a pod that runs in the Burstable QoS cgroup's shares when
// they do not count it yet (a pod this agent found running after a
// restart, or whose requests changed), as the kubelet's periodic
// UpdateCgroups sums its active pods; it writes only on a change. A
// failed write is logged: the next sync tries again.
func (p *podCgroups) observe(pod *corev1.Pod) {
	if !p.enabled() {
		return
	}
	class := qos.PodClass(pod)
	milliCPU := burstableRequest(pod, class)
	p.mu.Lock()
	known, counted := p.burstable[pod.UID]
	p.mu.Unlock()
	if milliCPU < 0 || (counted && known == milliCPU) {
		return
	}
	mgr, err := p.manager()
	if err == nil {
		err = p.updateQOS(mgr, pod.UID, milliCPU)
	}
	if err != nil {
		p.log.Error(err, "Failed to update the QoS cgroups", "podUID", pod.UID)
	}
}

// burstableRequest is the pod's cpu request in millicores when it is
// Burstable, -1 otherwise.
func burstableRequest(pod *corev1.Pod, class corev1.PodQOSClass) int64 {
	if class != corev1.PodQOSBurstable {
		return -1
	}
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	return req.Cpu().MilliValue()
}

// updateQOS records the pod's Burstable cpu request (milliCPU < 0: none;
// removed: drop the pod) and writes the QoS cgroups: on first use the
// kubepods cgroup and both QoS cgroups (qos_container_manager_linux.go
// Start), each time the Burstable shares.
func (p *podCgroups) updateQOS(mgr cgroupManager, uid types.UID, milliCPU int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if milliCPU >= 0 {
		p.burstable[uid] = milliCPU
	} else {
		delete(p.burstable, uid)
	}
	if !p.qosReady {
		if err := mgr.Ensure(p.root.Child(kubepodsCgroup), p.kubepodsResources()); err != nil {
			return fmt.Errorf("kubepods cgroup: %w", err)
		}
	}
	var sum int64
	for _, m := range p.burstable {
		sum += m
	}
	for _, class := range []corev1.PodQOSClass{corev1.PodQOSBurstable, corev1.PodQOSBestEffort} {
		res := p.qosResources(class, sum, !p.qosReady)
		if err := mgr.Ensure(qosCgroupName(p.root, class), res); err != nil {
			return fmt.Errorf("%s QoS cgroup: %w", class, err)
		}
	}
	p.qosReady = true
	return nil
}

// kubepodsResources are the kubepods cgroup's limits: the node's cpu as
// shares and its memory capacity (node_container_manager_linux.go
// createNodeAllocatableCgroups without enforceNodeAllocatable), and on
// cgroup v2 no memory protection (the kubelet's reset of memory.min and
// memory.low at start, with its MemoryQoS feature gate off by default).
func (p *podCgroups) kubepodsResources() *cgroupResources {
	res := &cgroupResources{CPUShares: ptrTo(milliCPUToShares(int64(p.cpus) * milliCPUPerCPU))}
	if m := p.memory(); m > 0 {
		res.Memory = ptrTo(m)
	}
	if p.v2 {
		res.Unified = map[string]string{"memory.min": "0", "memory.low": "0"}
	}
	return res
}

// qosResources are a QoS cgroup's limits (qos_container_manager_linux.go):
// BestEffort gets the minimum shares, Burstable the shares of its pods'
// summed cpu requests; both unbounded huge pages; and at the first write,
// on cgroup v2, Burstable gets memory.low 0 (Start's reset).
func (p *podCgroups) qosResources(class corev1.PodQOSClass, burstableMilliCPU int64, first bool) *cgroupResources {
	res := &cgroupResources{HugePageLimit: unlimitedHugePages(p.hugePages)}
	if class == corev1.PodQOSBestEffort {
		res.CPUShares = ptrTo(int64(minShares))
		return res
	}
	res.CPUShares = ptrTo(milliCPUToShares(burstableMilliCPU))
	if first && p.v2 {
		res.Unified = map[string]string{"memory.low": "0"}
	}
	return res
}

// remove removes the pod's cgroup wherever its class put it, then gives
// the Burstable QoS cgroup the shares of the pods left. It does nothing
// when pod cgroups are off.
func (p *podCgroups) remove(uid types.UID) error {
	if !p.enabled() {
		return nil
	}
	mgr, err := p.manager()
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range allPodCgroupNames(p.root, uid) {
		if err := mgr.Remove(name); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove cgroup of pod %s: %w", uid, err)
	}
	p.mu.Lock()
	_, wasBurstable := p.burstable[uid]
	p.mu.Unlock()
	if wasBurstable {
		if err := p.updateQOS(mgr, uid, -1); err != nil {
			return fmt.Errorf("update QoS cgroups after pod %s: %w", uid, err)
		}
	}
	return nil
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
