package stats

import (
	"sync"
	"time"
)

// Bounds of the window UsageNanoCores is computed over when the runtime
// leaves it empty.
const (
	// cpuSampleInterval is the shortest interval between two stored
	// readings of a key, like the kubelet's 10 s housekeeping: readings
	// closer together than this reuse the last computed rate, so frequent
	// scrapes do not shrink the window to a few milliseconds of noise.
	cpuSampleInterval = 10 * time.Second
	// cpuSampleMaxAge is the age past which a stored reading is too old to
	// compute a current rate from (the kubelet's CPU usage cache period):
	// the first reading after a longer pause reports no rate rather than
	// the average over the pause.
	cpuSampleMaxAge = 10 * time.Minute
)

// cpuSample is one cumulative CPU reading, with the rate computed when it
// was stored (nil for the first reading of a key or after a reset).
type cpuSample struct {
	at    time.Time
	usage uint64
	rate  *uint64
}

// cpuCache keeps the last stored CPU reading of each container, pod and the
// node, to compute UsageNanoCores where the runtime leaves it empty, as the
// kubelet's CRI stats provider does. Every reading, whatever the mode, may
// replace the stored one, so the rate is always over a recent interval.
// Safe for concurrent use.
type cpuCache struct {
	mu      sync.Mutex
	samples map[string]cpuSample
}

func newCPUCache() *cpuCache {
	return &cpuCache{samples: map[string]cpuSample{}}
}

// nanoCores returns the key's usage in nanocores over its last interval.
// A reading at least cpuSampleInterval after the stored one replaces it and
// yields the rate between the two; a closer one leaves it in place and
// yields the rate stored with it (or, when it has none, the rate since it).
// nil without a usable earlier reading: none, one older than
// cpuSampleMaxAge, or a counter that went back (a new instance), each of
// which makes this reading the stored one.
func (c *cpuCache) nanoCores(key string, at time.Time, usage uint64) *uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev, ok := c.samples[key]
	if !ok || usage < prev.usage || at.Sub(prev.at) > cpuSampleMaxAge {
		c.samples[key] = cpuSample{at: at, usage: usage}
		return nil
	}
	elapsed := at.Sub(prev.at)
	if elapsed >= cpuSampleInterval {
		rate := nanoCoresBetween(prev.usage, usage, elapsed)
		c.samples[key] = cpuSample{at: at, usage: usage, rate: &rate}
		return ptr(rate)
	}
	if prev.rate != nil {
		return ptr(*prev.rate)
	}
	if elapsed <= 0 {
		return nil
	}
	return ptr(nanoCoresBetween(prev.usage, usage, elapsed))
}

// nanoCoresBetween is the average rate of a CPU counter that went from
// from to to in elapsed (> 0).
func nanoCoresBetween(from, to uint64, elapsed time.Duration) uint64 {
	return uint64(float64(to-from) / float64(elapsed.Nanoseconds()) * 1e9)
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
