package stats

import (
	"sync"
	"time"
)

// cpuSample is one cumulative CPU reading.
type cpuSample struct {
	at    time.Time
	usage uint64
}

// cpuCache keeps the last CPU reading of each container, pod and the node,
// to compute UsageNanoCores where the runtime leaves it empty, as the
// kubelet's CRI stats provider does. Safe for concurrent use.
type cpuCache struct {
	mu      sync.Mutex
	samples map[string]cpuSample
}

func newCPUCache() *cpuCache {
	return &cpuCache{samples: map[string]cpuSample{}}
}

// nanoCores returns the average usage in nanocores between the key's last
// reading and this one, or nil without an earlier reading (or when the
// counter went back: a new instance). With update, or when the key has no
// reading yet, this reading replaces the cached one; a CPU-and-memory-only
// scrape leaves the cache alone otherwise, as the kubelet does, so frequent
// scrapes do not shrink the window the full summary averages over.
func (c *cpuCache) nanoCores(key string, at time.Time, usage uint64, update bool) *uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev, ok := c.samples[key]
	if !ok || update {
		c.samples[key] = cpuSample{at: at, usage: usage}
	}
	if !ok || !at.After(prev.at) || usage < prev.usage {
		return nil
	}
	n := uint64(float64(usage-prev.usage) / float64(at.Sub(prev.at).Nanoseconds()) * 1e9)
	return &n
}

// prune drops the readings of keys not in keep (containers and pods that
// are gone).
func (c *cpuCache) prune(keep map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.samples {
		if !keep[k] {
			delete(c.samples, k)
		}
	}
}
