package cri

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// listCache remembers, per sandbox or container ID, what GetPods decoded
// from a listed object (its pod's UID, name and namespace from the labels,
// its hash from the annotations, its qualified ID), so a relist of unchanged
// objects does not decode them again. An entry is reused only while the
// listed object's listedKey matches it: a change of state, creation time,
// runtime type, name or image is always decoded afresh. Labels and
// annotations are not compared (that would cost what decoding costs): the
// CRI sets them at creation and no call changes them, so under one ID and
// creation time they stay what was decoded. After each list the entries of
// IDs that list did not report are dropped: the cache never holds more than
// the latest list. It is safe for concurrent use.
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
	gen uint64
	key listedKey
	pod podRef
	c   noderuntime.Container
}

// listedKey holds the fields of a listed object that can change under one
// ID and that its entry is valid for. The image strings matter: cri-dockerd
// lists a container's image as Docker reports it now, which becomes the
// image ID when the tag the container was created from moves.
type listedKey struct {
	rawState  int32
	createdAt int64
	// typ is the runtime's type the ID was qualified with.
	typ string
	// name, image, userImage and imageRef are a container's listed
	// metadata name, image spec and image reference; empty for a sandbox.
	name, image, userImage, imageRef string
}

// containerKey is the listedKey of a ListContainers entry.
func containerKey(c *runtimeapi.Container, typ string) listedKey {
	return listedKey{
		rawState: int32(c.GetState()), createdAt: c.GetCreatedAt(), typ: typ,
		name: c.GetMetadata().GetName(), image: c.GetImage().GetImage(),
		userImage: c.GetImage().GetUserSpecifiedImage(), imageRef: c.GetImageRef(),
	}
}

// sandboxKey is the listedKey of a ListPodSandbox entry.
func sandboxKey(s *runtimeapi.PodSandbox, typ string) listedKey {
	return listedKey{rawState: int32(s.GetState()), createdAt: s.GetCreatedAt(), typ: typ}
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
// with the same key, and marks it seen by the current list; else it decodes
// the object with decode, stores and returns that. Call between begin and
// end.
func (c *listCache) lookup(m map[string]*listedEntry, id string, key listedKey, decode func() *listedEntry) *listedEntry {
	if e, ok := m[id]; ok && e.key == key {
		e.gen = c.gen
		return e
	}
	e := decode()
	e.gen, e.key = c.gen, key
	m[id] = e
	return e
}
