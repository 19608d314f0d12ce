package apiserver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
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

	// offline is set while the source serves its checkpoint.
	offline atomic.Bool
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

// Offline reports whether the source is serving its checkpoint because the
// API server did not answer at start: the pods it sent are the last ones
// the API server bound to this node, and the next snapshot comes from the
// API server when it answers. Safe for concurrent use.
func (s *Source) Offline() bool {
	return s.offline.Load()
}

// Run lists and watches the node's pods and sends a full snapshot on updates
// once the initial list has synced, then after every change (changes within
// Config.Debounce go into one snapshot). While the API server is
// unreachable the reflector retries with backoff and Run sends nothing, so
// the last snapshot stands. The pods sent are copies the receiver owns. Run
// blocks until ctx ends and returns nil; it returns an error at once if the
// Config is invalid or there is no client.
//
// With Config.CheckpointDir, every snapshot is saved there before it is
// sent, and if the first list has not synced within Config.OfflineAfter
// the checkpoint is sent instead, with Offline true until the list syncs
// (see the package doc).
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
	var cp *checkpoint
	if cfg.CheckpointDir != "" {
		cp = newCheckpoint(cfg.CheckpointDir, s.log)
	}
	s.loop(ctx, store, updates, cfg, cp)
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
// ones Debounce after the first change of each burst, until ctx ends. With
// a checkpoint, it sends the checkpoint if the store has not synced within
// OfflineAfter.
func (s *Source) loop(ctx context.Context, store *podStore, updates chan<- []*corev1.Pod, cfg Config, cp *checkpoint) {
	var timer, offlineTimer clock.Timer
	var fire, offline <-chan time.Time
	if cp != nil {
		offlineTimer = s.clk.NewTimer(cfg.OfflineAfter)
		offline = offlineTimer.C()
	}
	defer func() {
		for _, t := range []clock.Timer{timer, offlineTimer} {
			if t != nil {
				t.Stop()
			}
		}
	}()
	sent := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-offline:
			offline = nil
			if !s.sendCheckpoint(ctx, cp, updates, cfg.OfflineAfter) {
				return
			}
		case <-store.changed:
			if !sent {
				sent, offline = true, nil
				if !s.send(ctx, store, updates, cp, true) {
					return
				}
				continue
			}
			if timer == nil {
				timer = s.clk.NewTimer(cfg.Debounce)
				fire = timer.C()
			}
		case <-fire:
			timer, fire = nil, nil
			if !s.send(ctx, store, updates, cp, false) {
				return
			}
		}
	}
}

// sendCheckpoint sends the checkpointed pods and marks the source offline;
// without a checkpoint directory (the API server was never listed) it
// sends nothing, so the agent still waits for this source before it treats
// any pod as an orphan. It reports false if ctx ended first.
func (s *Source) sendCheckpoint(ctx context.Context, cp *checkpoint, updates chan<- []*corev1.Pod, after time.Duration) bool {
	pods, found, err := cp.load()
	switch {
	case err != nil:
		s.log.Error(err, "API server did not answer and the pod checkpoint cannot be read; waiting for the API server", "after", after)
		return true
	case !found:
		s.log.Info("API server did not answer and there is no pod checkpoint yet; waiting for the API server", "after", after, "dir", cp.dir)
		return true
	}
	s.offline.Store(true)
	s.log.Info("API server did not answer; running the checkpointed pods offline until it does", "after", after, "pods", len(pods), "dir", cp.dir)
	select {
	case updates <- pods:
		return true
	case <-ctx.Done():
		return false
	}
}

// send saves one snapshot to the checkpoint, if there is one, and delivers
// it; it reports false if ctx ended first.
func (s *Source) send(ctx context.Context, store *podStore, updates chan<- []*corev1.Pod, cp *checkpoint, first bool) bool {
	pods := store.snapshot()
	if first {
		s.log.Info("Listed pods bound to this node", "pods", len(pods))
		if s.offline.Swap(false) {
			s.log.Info("API server answered; its pods replace the checkpointed ones, matched by UID", "pods", len(pods))
		}
	} else {
		s.log.V(4).Info("Sending snapshot of pods", "pods", len(pods))
	}
	if cp != nil {
		if err := cp.save(pods); err != nil {
			s.log.Error(err, "Failed to update the pod checkpoint; the pods still run", "dir", cp.dir)
		}
	}
	select {
	case updates <- pods:
		return true
	case <-ctx.Done():
		return false
	}
}
