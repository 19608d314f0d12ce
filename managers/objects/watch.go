package objects

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// kind is how one resource (ConfigMaps, Secrets) is read from the API.
type kind struct {
	resource  schema.GroupResource
	example   runtime.Object
	typeName  string
	list      func(ctx context.Context, namespace string, opts metav1.ListOptions) (runtime.Object, error)
	watch     func(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error)
	get       func(ctx context.Context, namespace, name string) (runtime.Object, error)
	immutable func(obj runtime.Object) bool
}

type objectKey struct{ namespace, name string }

// entry is one watched object: how many registered pods reference it, and
// the store its own reflector fills.
type entry struct {
	refs  int
	store *syncStore
	// stop cancels the entry's reflector; nil until Run starts it.
	stop context.CancelFunc
	// immutable is set once a Get found the object immutable: its watch is
	// stopped and the store keeps the last content, as the kubelet does.
	immutable bool
}

// kindCache holds the watched objects of one kind. Safe for concurrent
// use.
type kindCache struct {
	kind
	mu      sync.Mutex
	entries map[objectKey]*entry
}

func newKindCache(k kind) *kindCache {
	return &kindCache{kind: k, entries: map[objectKey]*entry{}}
}

// add counts one more reference to namespace/name.
func (c *kindCache) add(namespace, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := objectKey{namespace, name}
	e := c.entries[k]
	if e == nil {
		e = &entry{store: newSyncStore()}
		c.entries[k] = e
	}
	e.refs++
}

// remove drops one reference; the last one stops the object's watch.
func (c *kindCache) remove(namespace, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := objectKey{namespace, name}
	e := c.entries[k]
	if e == nil {
		return
	}
	if e.refs--; e.refs > 0 {
		return
	}
	if e.stop != nil {
		e.stop()
	}
	delete(c.entries, k)
}

// startPending starts a reflector for every referenced object that has
// none, each under a child of ctx, counted in wg.
func (c *kindCache) startPending(ctx context.Context, wg *sync.WaitGroup, client kubernetes.Interface, clk clock.Clock, log logr.Logger, backoff *wait.Backoff) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if e.stop != nil || e.immutable {
			continue
		}
		rctx, cancel := context.WithCancel(ctx)
		e.stop = cancel
		rlog := log.WithValues("resource", c.resource.String(), "namespace", k.namespace, "name", k.name)
		refl := cache.NewReflectorWithOptions(c.listWatch(client, k), c.example, e.store, cache.ReflectorOptions{
			Name:            fmt.Sprintf("object-%s/%s/%s", c.resource.Resource, k.namespace, k.name),
			TypeDescription: c.typeName,
			Clock:           clk,
			Logger:          &rlog,
			Backoff:         backoff,
		})
		wg.Go(func() { refl.RunWithContext(klog.NewContext(rctx, rlog)) })
	}
}

// listWatch lists and watches the one object k, with a metadata.name field
// selector: what the Node authorizer permits for objects that pods bound
// to the node reference.
func (c *kindCache) listWatch(client kubernetes.Interface, k objectKey) cache.ListerWatcher {
	selector := fields.OneTermEqualSelector("metadata.name", k.name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			return c.list(ctx, k.namespace, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return c.watch(ctx, k.namespace, opts)
		},
	}
	return cache.ToListWatcherWithWatchListSemantics(lw, client)
}

// stopAll stops every reflector; Run calls it when it ends.
func (c *kindCache) stopAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.stop != nil {
			e.stop()
		}
	}
}

// lookup returns the object from its watch's store once the watch has
// synced (waiting up to syncWait), and from the API server when the object
// is not registered or its watch has not synced in time.
func (c *kindCache) lookup(ctx context.Context, clk clock.Clock, syncWait time.Duration, namespace, name string) (runtime.Object, error) {
	k := objectKey{namespace, name}
	c.mu.Lock()
	e := c.entries[k]
	c.mu.Unlock()
	if e == nil || !e.store.waitSynced(ctx, clk, syncWait) {
		return c.direct(ctx, namespace, name)
	}
	obj, exists, err := e.store.GetByKey(namespace + "/" + name)
	if err != nil {
		return nil, fmt.Errorf("get %s %s/%s from cache: %w", c.resource, namespace, name, err)
	}
	if !exists {
		return nil, apierrors.NewNotFound(c.resource, name)
	}
	o := obj.(runtime.Object)
	if c.immutable(o) {
		c.mu.Lock()
		if !e.immutable {
			e.immutable = true
			if e.stop != nil {
				e.stop()
			}
		}
		c.mu.Unlock()
	}
	return o, nil
}

// direct reads the object from the API server.
func (c *kindCache) direct(ctx context.Context, namespace, name string) (runtime.Object, error) {
	obj, err := c.get(ctx, namespace, name)
	if err != nil {
		return nil, fmt.Errorf("get %s %s/%s: %w", c.resource, namespace, name, err)
	}
	return obj, nil
}

// syncStore is a reflector's store that tells when the first list is in.
type syncStore struct {
	cache.Store
	once   sync.Once
	synced chan struct{}
}

func newSyncStore() *syncStore {
	return &syncStore{Store: cache.NewStore(cache.MetaNamespaceKeyFunc), synced: make(chan struct{})}
}

// Replace implements cache.Store: the reflector's (re)list.
func (s *syncStore) Replace(list []any, rv string) error {
	err := s.Store.Replace(list, rv)
	s.once.Do(func() { close(s.synced) })
	return err
}

// waitSynced reports whether the first list is in, waiting up to d.
func (s *syncStore) waitSynced(ctx context.Context, clk clock.Clock, d time.Duration) bool {
	select {
	case <-s.synced:
		return true
	default:
	}
	select {
	case <-s.synced:
		return true
	case <-ctx.Done():
		return false
	case <-clk.After(d):
		return false
	}
}
