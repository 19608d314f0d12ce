package nodestatus

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodekit/nodekit/managers/eviction"
)

// reservable are the resources --kube-reserved and --system-reserved
// accept. pid is accepted as the kubelet accepts it, but it is not a node
// resource: it would only limit the pods' cgroup, which nodekit does not
// enforce, so it changes no allocatable.
var reservable = map[corev1.ResourceName]bool{
	corev1.ResourceCPU: true, corev1.ResourceMemory: true, corev1.ResourceEphemeralStorage: true, "pid": true,
}

// ParseReserved parses a --kube-reserved or --system-reserved value,
// given as a map ("cpu" -> "100m"), into a ResourceList. Only cpu, memory,
// ephemeral-storage and pid are accepted, with non-negative quantities.
func ParseReserved(m map[string]string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		name := corev1.ResourceName(strings.TrimSpace(k))
		if !reservable[name] {
			return nil, fmt.Errorf("reserved resource %q: only cpu, memory, ephemeral-storage and pid can be reserved", k)
		}
		q, err := resource.ParseQuantity(strings.TrimSpace(m[k]))
		if err != nil {
			return nil, fmt.Errorf("reserved %s %q: %w", k, m[k], err)
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("reserved %s %q: must not be negative", k, m[k])
		}
		out[name] = q
	}
	return out, nil
}

// Allocatable is what the kubelet's node allocatable gives pods:
// capacity minus reserved (kube-reserved plus system-reserved) minus what
// the hard eviction thresholds keep (memory.available from memory,
// nodefs.available from ephemeral-storage), never below zero, and memory
// less every huge page size's capacity (huge pages are no memory pods can
// use as such). Resources of capacity not reserved are copied. The caller
// owns the result.
func Allocatable(capacity, reserved corev1.ResourceList, hard eviction.Thresholds) corev1.ResourceList {
	out := capacity.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	take := func(from corev1.ResourceList) {
		for name, q := range from {
			c, ok := out[name]
			if !ok {
				continue
			}
			c.Sub(q)
			if c.Sign() < 0 {
				c = *resource.NewQuantity(0, c.Format)
			}
			out[name] = c
		}
	}
	take(reserved)
	take(hard.ReservedFor(capacity))
	for name, q := range capacity {
		if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			take(corev1.ResourceList{corev1.ResourceMemory: q})
		}
	}
	return out
}
