package statustest

import (
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/managers/status"
)

// The agent's in-memory default passes.
func TestMemoryStatusesPasses(t *testing.T) {
	Suite(t, func() agent.StatusStore { return agent.NewMemoryStatuses() })
}

// The status manager nodekit binds as the StatusStore passes, in
// standalone mode (no API server) and not running.
func TestStatusManagerPasses(t *testing.T) {
	Suite(t, func() agent.StatusStore {
		return status.New(nil, nil, nil, testingclock.NewFakeClock(epoch), logr.Discard(), status.Config{})
	})
}

// Each broken store fails the check that looks for its bug.
func TestSuiteFailsBrokenStores(t *testing.T) {
	tests := []struct {
		name  string
		store func() agent.StatusStore
		want  string
	}{
		{"a store keyed by namespace/name", func() agent.StatusStore { return newByName() }, "pods are kept apart by UID"},
		{"a store that updates statuses in place", func() agent.StatusStore { return &inPlace{m: map[types.UID]*corev1.PodStatus{}} }, "a status once returned does not change"},
		{"a store whose RemovePodStatus does nothing", func() agent.StatusStore { return noRemove{agent.NewMemoryStatuses()} }, "RemovePodStatus forgets the pod and is idempotent"},
		{"a store that keeps the first status", func() agent.StatusStore { return &firstWins{MemoryStatuses: agent.NewMemoryStatuses()} }, "the last status set is read back"},
		{"a store whose SetPodStatus waits for a writer", func() agent.StatusStore { return newHandOff(t) }, "SetPodStatus does not block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Check(tt.store)
			t.Logf("violations: %v", errs)
			found := false
			for _, err := range errs {
				found = found || strings.HasPrefix(err.Error(), tt.want+":")
			}
			if !found {
				t.Errorf("Check found %v, want a violation of %q", errs, tt.want)
			}
		})
	}
}

// byName keys statuses by namespace/name.
type byName struct {
	mu     sync.Mutex
	byName map[string]*corev1.PodStatus
	names  map[types.UID]string
}

func newByName() *byName {
	return &byName{byName: map[string]*corev1.PodStatus{}, names: map[types.UID]string{}}
}

func (s *byName) SetPodStatus(pod *corev1.Pod, st *corev1.PodStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := pod.Namespace + "/" + pod.Name
	s.byName[key], s.names[pod.UID] = st, key
}

func (s *byName) GetPodStatus(uid types.UID) (*corev1.PodStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.byName[s.names[uid]]
	return st, ok
}

func (s *byName) RemovePodStatus(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byName, s.names[uid])
	delete(s.names, uid)
}

// inPlace overwrites the stored status it handed out.
type inPlace struct {
	mu sync.Mutex
	m  map[types.UID]*corev1.PodStatus
}

func (s *inPlace) SetPodStatus(pod *corev1.Pod, st *corev1.PodStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.m[pod.UID]; ok {
		*old = *st.DeepCopy()
		return
	}
	s.m[pod.UID] = st.DeepCopy()
}

func (s *inPlace) GetPodStatus(uid types.UID) (*corev1.PodStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[uid]
	return st, ok
}

func (s *inPlace) RemovePodStatus(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, uid)
}

// noRemove never forgets a pod.
type noRemove struct{ *agent.MemoryStatuses }

func (noRemove) RemovePodStatus(types.UID) {}

// firstWins ignores every status after a pod's first.
type firstWins struct{ *agent.MemoryStatuses }

func (s *firstWins) SetPodStatus(pod *corev1.Pod, st *corev1.PodStatus) {
	if _, ok := s.GetPodStatus(pod.UID); !ok {
		s.MemoryStatuses.SetPodStatus(pod, st)
	}
}

// handOff hands each status to a writer over an unbuffered channel before
// storing it: with no writer running, SetPodStatus blocks. The test's
// cleanup releases the blocked calls.
type handOff struct {
	*agent.MemoryStatuses
	ch      chan struct{}
	release chan struct{}
}

func newHandOff(t *testing.T) *handOff {
	h := &handOff{MemoryStatuses: agent.NewMemoryStatuses(), ch: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { close(h.release) })
	return h
}

func (h *handOff) SetPodStatus(pod *corev1.Pod, st *corev1.PodStatus) {
	select {
	case h.ch <- struct{}{}:
	case <-h.release:
	}
	h.MemoryStatuses.SetPodStatus(pod, st)
}
