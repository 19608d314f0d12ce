package sourcetest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/nodekit/nodekit/sources/file"
	"github.com/nodekit/nodekit/sources/sourcetest"
)

func TestTheFileSourcePassesTheSuite(t *testing.T) {
	sourcetest.Suite(t, func() sourcetest.Fixture {
		dir := t.TempDir()
		clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		return sourcetest.Fixture{
			Source: file.New(clk, logr.Discard(), file.Config{Path: dir, NodeName: "node-a"}),
			Set:    func(pods []*corev1.Pod) error { return writeManifests(dir, pods) },
			Poke:   func() { clk.Step(time.Second) },
			Key:    func(p *corev1.Pod) string { return p.Namespace + "/" + strings.TrimSuffix(p.Name, "-node-a") },
		}
	})
}

// writeManifests makes dir hold exactly one manifest per pod.
func writeManifests(dir string, pods []*corev1.Pod) error {
	old, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	keep := map[string]bool{}
	for _, p := range pods {
		b, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": p.Name, "namespace": p.Namespace}, "spec": p.Spec})
		if err != nil {
			return err
		}
		path := filepath.Join(dir, p.Namespace+"-"+p.Name+".yaml")
		keep[path] = true
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
	}
	for _, path := range old {
		if !keep[path] {
			if err := os.Remove(path); err != nil {
				return err
			}
		}
	}
	return nil
}

// memSource is a source over an in-memory store; its flaws are switches.
type memSource struct {
	mu      sync.Mutex
	pods    []*corev1.Pod
	changed chan struct{}

	noFirst    bool // sends nothing until the store first changes
	shared     bool // sends the store's own pods every time
	errOnStop  bool // returns ctx.Err() when stopped
	deafAfter2 bool // ignores changes after the second
	sets       int
}

func newMem() *memSource { return &memSource{changed: make(chan struct{}, 1)} }

func (m *memSource) Name() string { return "mem" }

func (m *memSource) set(pods []*corev1.Pod) error {
	m.mu.Lock()
	m.sets++
	if !(m.deafAfter2 && m.sets > 2) {
		m.pods = pods
	}
	m.mu.Unlock()
	select {
	case m.changed <- struct{}{}:
	default:
	}
	return nil
}

func (m *memSource) snapshot() []*corev1.Pod {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(m.pods))
	for _, p := range m.pods {
		if !m.shared {
			p = p.DeepCopy()
		}
		out = append(out, p)
	}
	return out
}

func (m *memSource) Run(ctx context.Context, updates chan<- []*corev1.Pod) error {
	if !m.noFirst {
		updates <- m.snapshot()
	}
	for {
		select {
		case <-ctx.Done():
			if m.errOnStop {
				return ctx.Err()
			}
			return nil
		case <-m.changed:
			updates <- m.snapshot()
		}
	}
}

func fixture(m *memSource) func() sourcetest.Fixture {
	return func() sourcetest.Fixture { return sourcetest.Fixture{Source: m, Set: m.set} }
}

func TestACorrectMemorySourcePassesTheSuite(t *testing.T) {
	sourcetest.Suite(t, fixture(newMem()))
}

func TestTheSuiteFailsBrokenSources(t *testing.T) {
	old := sourcetest.Timeout
	sourcetest.Timeout = 500 * time.Millisecond
	defer func() { sourcetest.Timeout = old }()
	broken := map[string]func(*memSource){
		"one that sends no first snapshot for an empty store": func(m *memSource) { m.noFirst = true },
		"one that sends the same pods in every snapshot":      func(m *memSource) { m.shared = true },
		"one whose Run returns an error when stopped":         func(m *memSource) { m.errOnStop = true },
		"one that stops following its store":                  func(m *memSource) { m.deafAfter2 = true },
	}
	for name, breakIt := range broken {
		m := newMem()
		breakIt(m)
		if errs := sourcetest.Check(fixture(m)); len(errs) == 0 {
			t.Errorf("the suite passed %s", name)
		} else {
			t.Logf("%s: %v", name, fmt.Sprint(errs[0]))
		}
	}
}
