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
//     (the pod's ephemeral storage: rootfs, logs and emptyDirs);
//   - inodesFree: the same with inodes used, against no request;
//   - pid.available: lower priority first, then more processes.
//
// A pod without stats is ranked before those with stats, as upstream.
type KubeletRanker struct{}

var _ Ranker = KubeletRanker{}

// Rank implements Ranker.
func (KubeletRanker) Rank(signal Signal, pods []*corev1.Pod, stats map[types.UID]statsapi.PodStats) []*corev1.Pod {
	out := append([]*corev1.Pod(nil), pods...)
	var usage func(statsapi.PodStats) (int64, bool)
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
		u, ok := usage(s)
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

func memoryUsage(s statsapi.PodStats) (int64, bool) {
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

func diskUsage(s statsapi.PodStats) (int64, bool) {
	if s.EphemeralStorage != nil && s.EphemeralStorage.UsedBytes != nil {
		return int64(*s.EphemeralStorage.UsedBytes), true
	}
	return 0, false
}

func inodeUsage(s statsapi.PodStats) (int64, bool) {
	if s.EphemeralStorage != nil && s.EphemeralStorage.InodesUsed != nil {
		return int64(*s.EphemeralStorage.InodesUsed), true
	}
	return 0, false
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
