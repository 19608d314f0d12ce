package pleg

import (
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Cache holds the latest runtime status of every pod the runtime knows, as
// written by a PLEG, and lets pod workers wait for a status newer than their
// last sync.
//
// Each entry carries the time it was observed ("modified"); the cache also has
// a global timestamp, advanced by UpdateTime, before which every entry is
// known to be current. A pod without an entry has no sandbox and no container
// in the runtime as of the global timestamp.
//
// Ownership: the cache stores the *PodStatus pointer it is given and returns
// that same pointer from Get and GetNewerThan. Writers must not mutate a
// status after Set, and readers must not mutate what they are given; copy
// first.
//
// All methods are safe for concurrent use. The zero value is not usable; use
// NewCache.
type Cache struct {
	clk clock.Clock

	mu sync.Mutex
	// pods maps a pod UID to its latest entry.
	pods map[types.UID]cacheEntry
	// timestamp is the global timestamp; zero until the first UpdateTime.
	timestamp time.Time
	// waiters maps a pod UID to the GetNewerThan calls waiting on it.
	waiters map[types.UID][]*cacheWaiter
	// blocked counts the GetNewerThan calls waiting.
	blocked int
	// waiting receives a value, without blocking, whenever a GetNewerThan
	// call starts to wait.
	waiting chan struct{}
}

// cacheEntry is one pod's stored status.
type cacheEntry struct {
	status   *noderuntime.PodStatus
	err      error
	modified time.Time
}

// cacheWaiter is one blocked GetNewerThan call.
type cacheWaiter struct {
	minTime time.Time
	// ch receives the entry once; buffered so the notifier never blocks.
	ch chan cacheEntry
}

// NewCache returns an empty cache. clk bounds the timestamps the cache
// accepts (see Set). It does no I/O and starts no goroutines.
func NewCache(clk clock.Clock) *Cache {
	return &Cache{
		clk:     clk,
		pods:    make(map[types.UID]cacheEntry),
		waiters: make(map[types.UID][]*cacheWaiter),
		waiting: make(chan struct{}, 1),
	}
}

// Get returns the pod's stored status and the error of its last inspection.
// For a pod without an entry it returns a new empty status with only ID set,
// and a nil error. It never blocks on the PLEG and never returns a nil status.
// The caller must not mutate the returned status.
func (c *Cache) Get(uid types.UID) (*noderuntime.PodStatus, error) {
	c.mu.Lock()
	e := c.getLocked(uid)
	c.mu.Unlock()
	return e.status, e.err
}

// GetNewerThan blocks until the cache can vouch for a status of the pod
// observed strictly after minTime, and returns it with the error of that
// inspection. The condition holds when the pod's entry was modified after
// minTime, or when the global timestamp is after minTime (then the current
// entry, or an empty status if the pod has none, is returned: nothing changed
// for the pod between minTime and that relist).
//
// When ctx ends first it returns a nil status and ctx.Err(). Safe for
// concurrent use; the caller must not mutate the returned status.
func (c *Cache) GetNewerThan(ctx context.Context, uid types.UID, minTime time.Time) (*noderuntime.PodStatus, error) {
	c.mu.Lock()
	if e, ok := c.getIfNewerLocked(uid, minTime); ok {
		c.mu.Unlock()
		return e.status, e.err
	}
	w := &cacheWaiter{minTime: minTime, ch: make(chan cacheEntry, 1)}
	c.waiters[uid] = append(c.waiters[uid], w)
	c.blocked++
	c.mu.Unlock()
	select {
	case c.waiting <- struct{}{}:
	default:
	}

	select {
	case e := <-w.ch:
		return e.status, e.err
	case <-ctx.Done():
	}
	c.mu.Lock()
	c.removeWaiterLocked(uid, w)
	c.mu.Unlock()
	// An entry delivered while ctx was ending is dropped: a cancelled call
	// always reports the cancellation.
	return nil, ctx.Err()
}

// Set stores the pod's status (possibly nil when err is set, in which case an
// empty status is stored) observed at timestamp, and wakes the GetNewerThan
// calls whose condition now holds. It reports whether the entry was stored.
//
// The cache never goes back in time: a Set older than the stored entry is
// ignored and returns false. A timestamp after the cache clock's now is
// clamped to now, so that a writer with a skewed clock cannot freeze an entry
// by making every later write look older. The cache keeps the status pointer;
// the caller must not mutate it afterwards.
func (c *Cache) Set(uid types.UID, status *noderuntime.PodStatus, err error, timestamp time.Time) (updated bool) {
	if status == nil {
		status = &noderuntime.PodStatus{ID: uid}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	timestamp = c.clampLocked(timestamp)
	if old, ok := c.pods[uid]; ok && old.modified.After(timestamp) {
		return false
	}
	c.pods[uid] = cacheEntry{status: status, err: err, modified: timestamp}
	c.notifyLocked(uid, timestamp)
	return true
}

// Delete removes the pod's entry; Get then returns an empty status. Delete
// wakes nobody by itself: the PLEG deletes a vanished pod during a relist and
// the relist's UpdateTime wakes the pod's waiters with the empty status.
// Deleting an absent pod is a no-op.
func (c *Cache) Delete(uid types.UID) {
	c.mu.Lock()
	delete(c.pods, uid)
	c.mu.Unlock()
}

// UpdateTime advances the global timestamp to timestamp (never backwards;
// clamped to the cache clock's now like Set) and wakes every GetNewerThan call
// whose minTime is before it. A PLEG calls it after a relist has written every
// changed pod, with the time taken before that relist listed the runtime.
func (c *Cache) UpdateTime(timestamp time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	timestamp = c.clampLocked(timestamp)
	if !timestamp.After(c.timestamp) {
		return
	}
	c.timestamp = timestamp
	for uid := range c.waiters {
		c.notifyLocked(uid, timestamp)
	}
}

// Waiting returns a channel that receives a value whenever a GetNewerThan
// call starts to wait (several starts may give one value). A PLEG that does
// not advance the global timestamp on a short period (Evented) receives from
// it and relists to vouch for the waiting pods; nobody else should. It is
// the same channel on every call.
func (c *Cache) Waiting() <-chan struct{} { return c.waiting }

// Blocked returns how many GetNewerThan calls are waiting now.
func (c *Cache) Blocked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.blocked
}

// Timestamp returns the global timestamp: every entry is current as of it.
// It is zero before the first UpdateTime.
func (c *Cache) Timestamp() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timestamp
}

// Entry returns the pod's stored status, the time the entry was observed
// (zero for a pod without an entry, whose empty status is current as of
// Timestamp) and the error of its last inspection. The caller must not
// mutate the status.
func (c *Cache) Entry(uid types.UID) (status *noderuntime.PodStatus, modified time.Time, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.getLocked(uid)
	return e.status, e.modified, e.err
}

// clampLocked bounds timestamp by the clock's now.
func (c *Cache) clampLocked(timestamp time.Time) time.Time {
	if now := c.clk.Now(); timestamp.After(now) {
		return now
	}
	return timestamp
}

// getLocked returns the pod's entry, or an empty one.
func (c *Cache) getLocked(uid types.UID) cacheEntry {
	if e, ok := c.pods[uid]; ok {
		return e
	}
	return cacheEntry{status: &noderuntime.PodStatus{ID: uid}}
}

// getIfNewerLocked returns the pod's entry (or an empty one) when it is known
// to be newer than minTime.
func (c *Cache) getIfNewerLocked(uid types.UID, minTime time.Time) (cacheEntry, bool) {
	e, ok := c.pods[uid]
	if (ok && e.modified.After(minTime)) || c.timestamp.After(minTime) {
		return c.getLocked(uid), true
	}
	return cacheEntry{}, false
}

// notifyLocked hands the pod's current entry to every waiter on it whose
// minTime is before timestamp and forgets those waiters.
func (c *Cache) notifyLocked(uid types.UID, timestamp time.Time) {
	list := c.waiters[uid]
	if len(list) == 0 {
		return
	}
	kept := list[:0]
	for _, w := range list {
		if !timestamp.After(w.minTime) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.getLocked(uid)
		c.blocked--
	}
	clear(list[len(kept):])
	if len(kept) == 0 {
		delete(c.waiters, uid)
		return
	}
	c.waiters[uid] = kept
}

// removeWaiterLocked forgets w, if it is still waiting.
func (c *Cache) removeWaiterLocked(uid types.UID, w *cacheWaiter) {
	list := c.waiters[uid]
	if i := slices.Index(list, w); i >= 0 {
		list = slices.Delete(list, i, i+1)
		c.blocked--
	}
	if len(list) == 0 {
		delete(c.waiters, uid)
		return
	}
	c.waiters[uid] = list
}
