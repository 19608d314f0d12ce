package eviction

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Ranker orders the pods that may be evicted to reclaim a signal: the
// first is evicted first. It is the policy slot researchers replace; it
// must not mutate the pods, and it returns a new slice.
type Ranker interface {
	Rank(signal Signal, pods []*corev1.Pod, stats map[types.UID]statsapi.PodStats) []*corev1.Pod
}

// KubeletRanker is the default Ranker, the kubelet's order:
//   - memory.available: pods whose working set exceeds their memory
//     requests first, then lower priority first, then the larger working
//     set above requests;
//   - nodefs/imagefs available: the same with ephemeral-storage usage
//     (its containers' writable layers and logs and its local ephemeral
//     volumes: emptyDir on disk, configMap, gitRepo);
//   - inodesFree: the same with inodes used, against no request;
//   - pid.available: lower priority first, then more processes.
//
// A pod without stats is ranked before those with stats, as upstream.
type KubeletRanker struct{}

var _ Ranker = KubeletRanker{}

// Rank implements Ranker.
func (KubeletRanker) Rank(signal Signal, pods []*corev1.Pod, stats map[types.UID]statsapi.PodStats) []*corev1.Pod {
	out := append([]*corev1.Pod(nil), pods...)
	var usage func(*corev1.Pod, statsapi.PodStats) (int64, bool)
	var request corev1.ResourceName
	switch signal {
	case SignalMemoryAvailable:
		usage, request = memoryUsage, corev1.ResourceMemory
	case SignalNodeFsAvailable, SignalImageFsAvailable:
		usage, request = diskUsage, corev1.ResourceEphemeralStorage
	case SignalNodeFsInodesFree, SignalImageFsInodesFree:
		usage = inodeUsage
	case SignalPIDAvailable:
		sort.SliceStable(out, func(i, j int) bool {
			if c := cmpPriority(out[i], out[j]); c != 0 {
				return c < 0
			}
			pi, _ := processes(stats, out[i])
			pj, _ := processes(stats, out[j])
			return pi > pj
		})
		return out
	default:
		return out
	}
	above := func(p *corev1.Pod) (int64, bool) {
		s, ok := stats[p.UID]
		if !ok {
			return 0, false
		}
		u, ok := usage(p, s)
		if !ok {
			return 0, false
		}
		if request != "" {
			req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
			q := req[request]
			u -= q.Value()
		}
		return u, true
	}
	type key struct {
		above int64
		found bool
	}
	keys := make(map[*corev1.Pod]key, len(out))
	for _, p := range out {
		a, f := above(p)
		keys[p] = key{a, f}
	}
	sort.SliceStable(out, func(i, j int) bool {
		ai, fi := keys[out[i]].above, keys[out[i]].found
		aj, fj := keys[out[j]].above, keys[out[j]].found
		if fi != fj {
			return !fi // no stats first
		}
		if (ai > 0) != (aj > 0) {
			return ai > 0 // exceeding requests first
		}
		if c := cmpPriority(out[i], out[j]); c != 0 {
			return c < 0
		}
		return ai > aj
	})
	return out
}

// cmpPriority is negative when a has the lower priority (evicted first).
func cmpPriority(a, b *corev1.Pod) int {
	pa, pb := priority(a), priority(b)
	switch {
	case pa < pb:
		return -1
	case pa > pb:
		return 1
	}
	return 0
}

func priority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

func memoryUsage(_ *corev1.Pod, s statsapi.PodStats) (int64, bool) {
	if s.Memory != nil && s.Memory.WorkingSetBytes != nil {
		return int64(*s.Memory.WorkingSetBytes), true
	}
	var sum int64
	found := false
	for _, c := range s.Containers {
		if c.Memory != nil && c.Memory.WorkingSetBytes != nil {
			sum += int64(*c.Memory.WorkingSetBytes)
			found = true
		}
	}
	return sum, found
}

// diskUsage is the pod's use of local storage as the kubelet measures it
// for ranking: its containers' writable layers and logs plus its local
// ephemeral volumes (see localVolumeNames) from VolumeStats; the pod's
// EphemeralStorage when the stats have none of these.
func diskUsage(p *corev1.Pod, s statsapi.PodStats) (int64, bool) {
	return fsUsage(p, s, func(f *statsapi.FsStats) *uint64 { return f.UsedBytes })
}

// inodeUsage is diskUsage in inodes.
func inodeUsage(p *corev1.Pod, s statsapi.PodStats) (int64, bool) {
	return fsUsage(p, s, func(f *statsapi.FsStats) *uint64 { return f.InodesUsed })
}

func fsUsage(p *corev1.Pod, s statsapi.PodStats, field func(*statsapi.FsStats) *uint64) (int64, bool) {
	var sum int64
	found := false
	add := func(f *statsapi.FsStats) {
		if f == nil {
			return
		}
		if v := field(f); v != nil {
			sum, found = sum+int64(*v), true
		}
	}
	for _, c := range s.Containers {
		add(c.Rootfs)
		add(c.Logs)
	}
	local := localVolumeNames(p)
	for i := range s.VolumeStats {
		if local[s.VolumeStats[i].Name] {
			add(&s.VolumeStats[i].FsStats)
		}
	}
	if found {
		return sum, true
	}
	if s.EphemeralStorage != nil {
		if v := field(s.EphemeralStorage); v != nil {
			return int64(*v), true
		}
	}
	return 0, false
}

// localVolumeNames are the pod's volumes that live on the node's
// filesystem and count as its ephemeral storage, as the kubelet's
// IsLocalEphemeralVolume: emptyDir of the default medium, configMap and
// gitRepo.
func localVolumeNames(p *corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumDefault || v.ConfigMap != nil || v.GitRepo != nil {
			out[v.Name] = true
		}
	}
	return out
}

func processes(stats map[types.UID]statsapi.PodStats, p *corev1.Pod) (int64, bool) {
	s, ok := stats[p.UID]
	if !ok || s.ProcessStats == nil || s.ProcessStats.ProcessCount == nil {
		return 0, false
	}
	return int64(*s.ProcessStats.ProcessCount), true
}

// SystemCriticalPriority is the priority at and above which a pod is
// critical (scheduling.SystemCriticalPriority).
const SystemCriticalPriority = 2 * 1000000000

// IsCritical reports whether the kubelet never evicts the pod: a static
// or mirror pod, or one of system-critical priority.
func IsCritical(p *corev1.Pod) bool {
	if src := p.Annotations["kubernetes.io/config.source"]; src != "" && src != "api" {
		return true
	}
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return true
	}
	return p.Spec.Priority != nil && *p.Spec.Priority >= SystemCriticalPriority
}

// quantity formats bytes for eviction messages.
func quantity(v int64) string {
	return resource.NewQuantity(v, resource.BinarySI).String()
}
