package sources

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// updatesBuffer is the capacity of the Updates channel, as the kubelet's.
const updatesBuffer = 50

// Mux runs pod sources and merges their snapshots into incremental
// PodUpdates. Build it with NewMux, start it with Run and read Updates.
type Mux struct {
	srcs    []Source
	clk     clock.Clock
	log     logr.Logger
	updates chan PodUpdate
	store   *store

	mu   sync.Mutex
	seen map[string]bool
}

// snapshot is one source's full list of pods.
type snapshot struct {
	source string
	pods   []*corev1.Pod
}

// NewMux returns a Mux over srcs. It does no I/O and starts nothing; the
// sources start when Run is called.
func NewMux(srcs []Source, clk clock.Clock, log logr.Logger) *Mux {
	log = log.WithName("sources")
	return &Mux{
		srcs:    srcs,
		clk:     clk,
		log:     log,
		updates: make(chan PodUpdate, updatesBuffer),
		store:   newStore(log),
		seen:    map[string]bool{},
	}
}

// Updates returns the channel of merged updates, the same channel on every
// call. It is never closed; stop reading when your context ends. The
// receiver owns the pods it receives.
func (m *Mux) Updates() <-chan PodUpdate {
	return m.updates
}

// Sources returns the names of the configured sources, in the order given to
// NewMux. Safe for concurrent use.
func (m *Mux) Sources() []string {
	names := make([]string, 0, len(m.srcs))
	for _, src := range m.srcs {
		names = append(names, src.Name())
	}
	return names
}

// SeenSource reports whether the named source has delivered at least one
// snapshot. Safe for concurrent use.
func (m *Mux) SeenSource(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen[name]
}

// SeenAllSources reports whether every configured source has delivered at
// least one snapshot: until then, the agent must not treat pods it does not
// know as orphans. True when there are no sources. Safe for concurrent use.
func (m *Mux) SeenAllSources() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, src := range m.srcs {
		if !m.seen[src.Name()] {
			return false
		}
	}
	return true
}

// Run runs every source in its own goroutine and merges their snapshots
// until ctx ends, then waits for the sources to return and returns nil. A
// source whose Run returns is logged; the others go on. Run returns an error
// at once if a source is nil or two sources share a name. Call Run once.
func (m *Mux) Run(ctx context.Context) error {
	if err := m.checkSources(); err != nil {
		return err
	}
	in := make(chan snapshot)
	var wg sync.WaitGroup
	for _, src := range m.srcs {
		m.start(ctx, &wg, src, in)
	}
	m.log.Info("Starting pod sources", "sources", m.Sources())
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return nil
		case snap := <-in:
			m.merge(ctx, snap)
		}
	}
}

func (m *Mux) checkSources() error {
	names := map[string]bool{}
	for i, src := range m.srcs {
		if src == nil {
			return fmt.Errorf("pod source %d is nil", i)
		}
		if names[src.Name()] {
			return fmt.Errorf("two pod sources are named %q", src.Name())
		}
		names[src.Name()] = true
	}
	return nil
}

// start runs src and forwards its snapshots, tagged with its name, to in.
func (m *Mux) start(ctx context.Context, wg *sync.WaitGroup, src Source, in chan<- snapshot) {
	name := src.Name()
	ch := make(chan []*corev1.Pod)
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		err := src.Run(ctx, ch)
		switch {
		case err != nil && !errors.Is(err, context.Canceled):
			m.log.Error(err, "Pod source failed; the other sources go on", "source", name)
		case ctx.Err() == nil:
			m.log.Info("Pod source stopped early; the other sources go on", "source", name)
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case pods := <-ch:
				select {
				case in <- snapshot{source: name, pods: pods}:
				case <-ctx.Done():
					return
				}
			}
		}
	})
}

// merge applies one snapshot and delivers its updates, giving up when ctx
// ends. The source counts as seen once its updates are in the channel, so a
// reader that checks SeenAllSources after draining Updates knows every pod.
func (m *Mux) merge(ctx context.Context, snap snapshot) {
	for _, u := range m.store.merge(snap.source, snap.pods, m.clk.Now()) {
		select {
		case m.updates <- u:
		case <-ctx.Done():
			return
		}
	}
	m.mu.Lock()
	first := !m.seen[snap.source]
	m.seen[snap.source] = true
	m.mu.Unlock()
	if first {
		m.log.Info("Pod source delivered its first snapshot", "source", snap.source, "pods", len(snap.pods))
	}
}
