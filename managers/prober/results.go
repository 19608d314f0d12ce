package prober

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// resultsCache is the default Results: one per probe type, as the
// kubelet's results managers.
type resultsCache struct {
	probe   ProbeType
	updates chan Update

	mu    sync.RWMutex
	cache map[string]Result
}

var _ Results = (*resultsCache)(nil)

func newResultsCache(probe ProbeType, buffer int) *resultsCache {
	return &resultsCache{
		probe:   probe,
		updates: make(chan Update, buffer),
		cache:   make(map[string]Result),
	}
}

// Get returns the cached result for the container.
func (c *resultsCache) Get(containerID string) (Result, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	r, ok := c.cache[containerID]
	return r, ok
}

// Updates streams changes of the cache.
func (c *resultsCache) Updates() <-chan Update { return c.updates }

// set caches result for the container and, when it changed, sends an
// Update. The send waits for room in the channel until ctx ends or stop
// closes or receives; the cached value is set either way.
func (c *resultsCache) set(ctx context.Context, stop <-chan struct{}, id string, result Result, uid types.UID) {
	if !c.store(id, result) {
		return
	}
	u := Update{ContainerID: id, Result: result, PodUID: uid, Probe: c.probe}
	select {
	case c.updates <- u:
	case <-ctx.Done():
	case <-stop:
	}
}

// store caches result and reports whether it differs from the cached one.
func (c *resultsCache) store(id string, result Result) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev, ok := c.cache[id]
	if ok && prev == result {
		return false
	}
	c.cache[id] = result
	return true
}

// remove forgets the container's result.
func (c *resultsCache) remove(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.cache, id)
}
