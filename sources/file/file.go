package file

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/sources"
)

// debounceDelay is how long the source waits after the last event of a
// burst before reading the directory, so that an editor's save (write a
// temporary file, rename it over the old one) gives one snapshot and never a
// snapshot without the pod.
const debounceDelay = 20 * time.Millisecond

var _ sources.Source = (*Source)(nil)

// Source is the static-pod manifest directory: a sources.Source named
// "file" whose pods are the manifests in Config.Path.
type Source struct {
	clk clock.WithTicker
	log logr.Logger
	cfg Config
}

// New returns a Source for cfg. It does no I/O and starts nothing; cfg is
// checked when Run starts.
func New(clk clock.WithTicker, log logr.Logger, cfg Config) *Source {
	return &Source{clk: clk, log: log.WithName("sources").WithName("file"), cfg: cfg}
}

// Name returns sources.FileSource ("file").
func (s *Source) Name() string { return sources.FileSource }

// Run reads the directory, sends a snapshot (an empty one if the directory
// is missing or holds no manifest), then watches the directory and rereads
// it every CheckPeriod, sending a new snapshot whenever the pods change,
// until ctx ends; then it returns nil. A directory that exists but cannot
// be read sends nothing until it can (the last snapshot stands, and the
// source does not count as seen before its first snapshot). It returns an
// error only for an
// invalid Config. Each snapshot's pods are new copies that the receiver
// owns. Run must not be called twice at the same time.
func (s *Source) Run(ctx context.Context, updates chan<- []*corev1.Pod) error {
	if err := s.cfg.Validate(); err != nil {
		return err
	}
	cfg := s.cfg.withDefaults()
	path := filepath.Clean(cfg.Path)
	r := &runner{
		log:     s.log,
		clk:     s.clk,
		dir:     newDir(path, cfg.NodeName, s.log),
		watch:   newWatch(path, s.clk, s.log),
		updates: updates,
	}
	defer r.stop()
	r.watch.start()
	ticker := s.clk.NewTicker(cfg.CheckPeriod)
	defer ticker.Stop()
	r.rescan(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
			r.log.V(6).Info("Periodic rescan of static pod directory", "path", path)
			r.rescan(ctx)
		case <-r.watch.retryC():
			if r.watch.start() {
				r.rescan(ctx)
			}
		case ev, ok := <-r.watch.events():
			r.event(ctx, ev, ok)
		case err, ok := <-r.watch.errors():
			if !ok {
				err = errors.New("fsnotify closed its error channel")
			}
			r.watch.lost(err)
		case <-r.debounceC:
			r.debounceC = nil
			r.rescan(ctx)
		}
	}
}

// runner is the state of one Run.
type runner struct {
	log     logr.Logger
	clk     clock.WithTicker
	dir     *dir
	watch   *watch
	updates chan<- []*corev1.Pod

	// sent is whether a snapshot was sent; last is that snapshot. Pods are
	// compared whole: a manifest with a fixed metadata.uid keeps its UID
	// when edited, and the edit must still reach the agent.
	sent bool
	last []*corev1.Pod

	debounce  clock.Timer
	debounceC <-chan time.Time
}

func (r *runner) event(ctx context.Context, ev fsnotify.Event, ok bool) {
	if !ok {
		r.watch.lost(errors.New("fsnotify closed its event channel"))
		return
	}
	switch r.watch.classify(ev) {
	case dirGone:
		r.watch.lost(fmt.Errorf("directory removed or renamed (%s)", ev.Op))
		r.rescan(ctx)
	case changed:
		r.log.V(4).Info("Static pod directory changed", "file", ev.Name, "op", ev.Op.String())
		r.armDebounce()
		r.debounceC = r.debounce.C()
	}
}

// armDebounce (re)starts the debounce timer. A fire of the previous arm
// that the loop has not received yet is drained first: it would cut the new
// delay short (and a clock that delivers fires synchronously, like the fake
// one, would block on the full channel while Reset waits for it).
func (r *runner) armDebounce() {
	if r.debounce == nil {
		r.debounce = r.clk.NewTimer(debounceDelay)
		return
	}
	if !r.debounce.Stop() {
		select {
		case <-r.debounce.C():
		default:
		}
	}
	r.debounce.Reset(debounceDelay)
}

// rescan reads the directory and sends its pods if they differ from the
// last snapshot sent (or if none was sent yet).
func (r *runner) rescan(ctx context.Context) {
	pods, ok := r.dir.scan()
	if !ok {
		return
	}
	if r.sent && apiequality.Semantic.DeepEqual(pods, r.last) {
		r.log.V(6).Info("Static pods unchanged", "path", r.dir.path)
		return
	}
	sent := clonePods(pods) // the receiver owns pods once they are sent
	select {
	case r.updates <- pods:
		r.sent, r.last = true, sent
		r.log.V(2).Info("Sent static pod snapshot", "path", r.dir.path, "pods", len(pods))
	case <-ctx.Done():
	}
}

// clonePods copies what was sent: the receiver owns the pods it got.
func clonePods(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}

func (r *runner) stop() {
	r.watch.close()
	if r.debounce != nil {
		r.debounce.Stop()
	}
}
