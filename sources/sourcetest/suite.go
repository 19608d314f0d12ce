package sourcetest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/sources"
)

// Fixture is a source under test and its backing store.
type Fixture struct {
	// Source is the source, not yet running.
	Source sources.Source
	// Set makes the store hold pods (namespace/name and one container
	// each), replacing what it held.
	Set func(pods []*corev1.Pod) error
	// Poke, when set, is called while the suite waits for a snapshot:
	// step a fake clock there. Defaults to nothing.
	Poke func()
	// Key, when set, maps a received pod to the "namespace/name" it was
	// Set as (a static pod source appends the node's name). Defaults to
	// its namespace/name.
	Key func(p *corev1.Pod) string
}

// Timeout bounds, in real time, every wait of the suite.
var Timeout = 10 * time.Second

// T is the part of testing.TB the suite uses.
type T interface {
	Helper()
	Errorf(format string, args ...any)
}

// Suite runs Check and reports every violation on t.
func Suite(t T, newFixture func() Fixture) {
	t.Helper()
	for _, err := range Check(newFixture) {
		t.Errorf("%v", err)
	}
}

// Check runs the contract on a fixture of newFixture and returns every
// violation.
func Check(newFixture func() Fixture) []error {
	f := newFixture()
	if f.Poke == nil {
		f.Poke = func() {}
	}
	if f.Key == nil {
		f.Key = func(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	updates := make(chan []*corev1.Pod, 100)
	done := make(chan error, 1)
	go func() { done <- f.Source.Run(ctx, updates) }()
	var errs []error
	seen := map[*corev1.Pod]bool{}
	wait := func(what string, want []string) bool {
		deadline := time.After(Timeout)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case snap := <-updates:
				for _, p := range snap {
					if seen[p] {
						errs = append(errs, fmt.Errorf("%s: pod %s/%s was sent in an earlier snapshot too (the same *corev1.Pod)", what, p.Namespace, p.Name))
					}
					seen[p] = true
				}
				if slices.Equal(keys(snap, f.Key), want) {
					return true
				}
			case err := <-done:
				errs = append(errs, fmt.Errorf("%s: Run returned %v while its context was live", what, err))
				return false
			case <-tick.C:
				f.Poke()
			case <-deadline:
				errs = append(errs, fmt.Errorf("%s: no snapshot of %v within %s", what, want, Timeout))
				return false
			}
		}
	}
	// The same objects in several steps: a source that hands out its
	// store's pods repeats them.
	one, two, three := pod("ns-a", "one"), pod("ns-b", "two"), pod("ns-a", "three")
	steps := []struct {
		what string
		pods []*corev1.Pod
	}{
		{"two pods added", []*corev1.Pod{one, two}},
		{"a third pod added", []*corev1.Pod{one, two, three}},
		{"a pod removed", []*corev1.Pod{one, three}},
		{"every pod removed", nil},
	}
	if wait("the first snapshot of an empty store", []string{}) {
		for _, s := range steps {
			if err := f.Set(s.pods); err != nil {
				errs = append(errs, fmt.Errorf("%s: fixture Set: %v", s.what, err))
				break
			}
			if !wait(s.what, keys(s.pods, nil)) {
				break
			}
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			errs = append(errs, fmt.Errorf("Run returned %v after its context ended, want nil", err))
		}
	case <-time.After(Timeout):
		errs = append(errs, fmt.Errorf("Run did not return within %s of its context ending", Timeout))
	}
	return errs
}

// pod is a pod of one busybox container.
func pod(namespace, name string) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox:1"}}}}
	p.Namespace, p.Name = namespace, name
	return p
}

// keys are the pods' keys (namespace/name with a nil key), sorted; never
// nil.
func keys(pods []*corev1.Pod, key func(*corev1.Pod) string) []string {
	out := []string{}
	for _, p := range pods {
		if key == nil {
			out = append(out, p.Namespace+"/"+p.Name)
		} else {
			out = append(out, key(p))
		}
	}
	sort.Strings(out)
	return out
}
