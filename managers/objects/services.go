package objects

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Services is the default ServiceLister: a reflector that lists and
// watches the Services of all namespaces (the node's role may), as the
// kubelet's service lister does for the service environment. Safe for
// concurrent use.
type Services struct {
	client kubernetes.Interface
	clk    clock.Clock
	log    logr.Logger

	store *syncStore
	mu    sync.Mutex
	ran   bool

	// backoff overrides the reflector's retry backoff; tests shorten it.
	backoff *wait.Backoff
}

var _ ServiceLister = (*Services)(nil)

// NewServices returns a Services reading through client. It does no I/O
// and starts nothing: Run does.
func NewServices(client kubernetes.Interface, clk clock.Clock, log logr.Logger) *Services {
	s := &Services{client: client, clk: clk, log: log.WithName("services")}
	s.store = &syncStore{
		Store:  cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}),
		synced: make(chan struct{}),
	}
	return s
}

// Run lists and watches Services until ctx ends, then returns nil. It may
// be called once.
func (s *Services) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.ran {
		s.mu.Unlock()
		return errors.New("services: Run called twice")
	}
	s.ran = true
	s.mu.Unlock()
	svcs := s.client.CoreV1().Services(metav1.NamespaceAll)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return svcs.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return svcs.Watch(ctx, opts)
		},
	}
	rlog := s.log.WithName("reflector")
	refl := cache.NewReflectorWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, s.client), &corev1.Service{}, s.store, cache.ReflectorOptions{
		Name:            "nodekit-services",
		TypeDescription: "*v1.Service",
		Clock:           s.clk,
		Logger:          &rlog,
		Backoff:         s.backoff,
	})
	refl.RunWithContext(klog.NewContext(ctx, rlog))
	return nil
}

// ListServices implements ServiceLister.
func (s *Services) ListServices(namespace string) ([]*corev1.Service, error) {
	objs, err := s.store.Store.(cache.Indexer).ByIndex(cache.NamespaceIndex, namespace)
	if err != nil {
		return nil, fmt.Errorf("list services of namespace %s: %w", namespace, err)
	}
	out := make([]*corev1.Service, 0, len(objs))
	for _, o := range objs {
		if svc, ok := o.(*corev1.Service); ok {
			out = append(out, svc)
		}
	}
	return out, nil
}

// HasSynced implements ServiceLister.
func (s *Services) HasSynced() bool {
	select {
	case <-s.store.synced:
		return true
	default:
		return false
	}
}
