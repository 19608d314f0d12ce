package cri

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// listCache remembers, per sandbox or container ID, what GetPods decoded
// from a listed object (its pod's UID, name and namespace from the labels,
// its hash from the annotations, its qualified ID), so a relist of unchanged
// objects does not decode them again. An entry is reused only while the
// listed object's state, creation time and the runtime's type match it, so a
// state change is always decoded afresh. After each list the entries of IDs
// that list did not report are dropped: the cache never holds more than the
// latest list. It is safe for concurrent use.
type listCache struct {
	mu sync.Mutex
	// gen numbers the lists; an entry's gen is the latest list that
	// reported it.
	gen        uint64
	sandboxes  map[string]*listedEntry
	containers map[string]*listedEntry
}

// listedEntry is one decoded object and what it was decoded from.
type listedEntry struct {
	gen       uint64
	rawState  int32
	createdAt int64
	pod       podRef
	c         noderuntime.Container
}

// podRef names the pod an object belongs to, as its labels say.
type podRef struct {
	uid             types.UID
	name, namespace string
}

// podRefOf reads the pod's identity from an object's labels.
func podRefOf(labels map[string]string) podRef {
	return podRef{uid: podUIDOf(labels), name: labels[noderuntime.LabelPodName], namespace: labels[noderuntime.LabelPodNamespace]}
}

// listCaches holds one cache per GetPods mode, so the PLEG's full lists and
// housekeeping's running-only lists do not evict each other's entries.
type listCaches struct {
	all, running listCache
}

// of returns the cache of one GetPods mode.
func (lc *listCaches) of(all bool) *listCache {
	if all {
		return &lc.all
	}
	return &lc.running
}

// begin locks the cache for one list and starts its generation. Call end
// when the list's objects have been looked up.
func (c *listCache) begin() {
	c.mu.Lock()
	c.gen++
	if c.sandboxes == nil {
		c.sandboxes = map[string]*listedEntry{}
		c.containers = map[string]*listedEntry{}
	}
}

// end drops the entries the list did not report and unlocks the cache.
func (c *listCache) end() {
	for _, m := range []map[string]*listedEntry{c.sandboxes, c.containers} {
		for id, e := range m {
			if e.gen != c.gen {
				delete(m, id)
			}
		}
	}
	c.mu.Unlock()
}

// lookup returns the entry of id in m when it was decoded from an object
// in the same state, created at the same time, under the same runtime type,
// and marks it seen by the current list; else it decodes the object with
// decode, stores and returns that. Call between begin and end.
func (c *listCache) lookup(m map[string]*listedEntry, id string, rawState int32, createdAt int64, typ string, decode func() *listedEntry) *listedEntry {
	if e, ok := m[id]; ok && e.rawState == rawState && e.createdAt == createdAt && e.c.ID.Type == typ {
		e.gen = c.gen
		return e
	}
	e := decode()
	e.gen, e.rawState, e.createdAt = c.gen, rawState, createdAt
	m[id] = e
	return e
}
