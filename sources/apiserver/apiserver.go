package apiserver

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/sources"
)

// Source is the API server pod source: the pods bound to this node. Build
// it with New and hand it to a sources.Mux.
type Source struct {
	client kubernetes.Interface
	clk    clock.Clock
	log    logr.Logger
	cfg    Config

	// backoff overrides the reflector's retry backoff; nil keeps
	// client-go's (800ms doubling to 30s). Tests shorten it.
	backoff *wait.Backoff
	// onStore, if set, is given Run's store; tests use it to watch it.
	onStore func(*podStore)
}

var _ sources.Source = (*Source)(nil)

// New returns a Source that reads the pods bound to cfg.NodeName through
// client. It does no I/O and starts nothing: Run does.
func New(client kubernetes.Interface, clk clock.Clock, log logr.Logger, cfg Config) *Source {
	return &Source{client: client, clk: clk, log: log.WithName("apiserver"), cfg: cfg}
}

// Name returns sources.APIServerSource ("api").
func (s *Source) Name() string {
	return sources.APIServerSource
}

// Run lists and watches the node's pods and sends a full snapshot on updates
// once the initial list has synced, then after every change (changes within
// Config.Debounce go into one snapshot). While the API server is
// unreachable the reflector retries with backoff and Run sends nothing, so
// the last snapshot stands. The pods sent are copies the receiver owns. Run
// blocks until ctx ends and returns nil; it returns an error at once if the
// Config is invalid or there is no client.
func (s *Source) Run(ctx context.Context, updates chan<- []*corev1.Pod) error {
	if err := s.cfg.Validate(); err != nil {
		return err
	}
	if s.client == nil {
		return errors.New("api source: no Kubernetes client")
	}
	cfg := s.cfg.withDefaults()
	store := newPodStore(cfg.NodeName)
	if s.onStore != nil {
		s.onStore(store)
	}
	rlog := s.log.WithName("reflector")
	refl := cache.NewReflectorWithOptions(s.listWatch(cfg.NodeName), &corev1.Pod{}, store, cache.ReflectorOptions{
		Name:            "nodekit-api-source",
		TypeDescription: "*v1.Pod",
		Clock:           s.clk,
		Logger:          &rlog,
		Backoff:         s.backoff,
	})

	ctx, cancel := context.WithCancel(klog.NewContext(ctx, rlog))
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { refl.RunWithContext(ctx) })
	s.log.Info("Watching pods bound to this node", "node", cfg.NodeName)
	s.loop(ctx, store, updates, cfg.Debounce)
	return nil
}

// listWatch lists and watches pods in all namespaces, always restricted to
// spec.nodeName=nodeName: a node may read no other pods.
func (s *Source) listWatch(nodeName string) cache.ListerWatcher {
	selector := fields.OneTermEqualSelector("spec.nodeName", nodeName).String()
	pods := s.client.CoreV1().Pods(metav1.NamespaceAll)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			return pods.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return pods.Watch(ctx, opts)
		},
	}
	// Lets the reflector use streaming lists where the client supports
	// them, and plain lists with fakes that do not.
	return cache.ToListWatcherWithWatchListSemantics(lw, s.client)
}

// loop sends the first snapshot as soon as the store has synced and later
// ones Debounce after the first change of each burst, until ctx ends.
func (s *Source) loop(ctx context.Context, store *podStore, updates chan<- []*corev1.Pod, debounce time.Duration) {
	var timer clock.Timer
	var fire <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	sent := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-store.changed:
			if !sent {
				sent = true
				if !s.send(ctx, store, updates, true) {
					return
				}
				continue
			}
			if timer == nil {
				timer = s.clk.NewTimer(debounce)
				fire = timer.C()
			}
		case <-fire:
			timer, fire = nil, nil
			if !s.send(ctx, store, updates, false) {
				return
			}
		}
	}
}

// send delivers one snapshot; it reports false if ctx ended first.
func (s *Source) send(ctx context.Context, store *podStore, updates chan<- []*corev1.Pod, first bool) bool {
	pods := store.snapshot()
	if first {
		s.log.Info("Listed pods bound to this node", "pods", len(pods))
	} else {
		s.log.V(4).Info("Sending snapshot of pods", "pods", len(pods))
	}
	select {
	case updates <- pods:
		return true
	case <-ctx.Done():
		return false
	}
}
