package apiserver

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func withRV(p *corev1.Pod, rv string) *corev1.Pod {
	p.ResourceVersion = rv
	return p
}

func TestStoreSignalsOnlyRealChanges(t *testing.T) {
	tests := []struct {
		name    string
		initial []any
		op      func(s *podStore) error
		want    int
	}{
		{
			name:    "the first list signals even when empty",
			initial: nil,
			op:      func(*podStore) error { return nil },
			want:    1,
		},
		{
			name:    "a relist of the same pods signals nothing",
			initial: []any{withRV(pod("a", node), "5")},
			op:      func(s *podStore) error { return s.Replace([]any{withRV(pod("a", node), "5")}, "9") },
			want:    1,
		},
		{
			name:    "a relist of equal pods without resource versions signals nothing",
			initial: []any{pod("a", node)},
			op:      func(s *podStore) error { return s.Replace([]any{pod("a", node)}, "9") },
			want:    1,
		},
		{
			name:    "a relist with a newer resource version signals",
			initial: []any{withRV(pod("a", node), "5")},
			op:      func(s *podStore) error { return s.Replace([]any{withRV(pod("a", node), "6")}, "9") },
			want:    2,
		},
		{
			name:    "a relist that lost a pod signals",
			initial: []any{pod("a", node), pod("b", node)},
			op:      func(s *podStore) error { return s.Replace([]any{pod("a", node)}, "9") },
			want:    2,
		},
		{
			name:    "an update with the same resource version signals nothing",
			initial: []any{withRV(pod("a", node), "5")},
			op:      func(s *podStore) error { return s.Update(withRV(pod("a", node), "5")) },
			want:    1,
		},
		{
			name:    "an added pod of another node signals nothing",
			initial: nil,
			op:      func(s *podStore) error { return s.Add(pod("x", "node2")) },
			want:    1,
		},
		{
			name:    "deleting an unknown pod signals nothing",
			initial: nil,
			op:      func(s *podStore) error { return s.Delete(pod("x", node)) },
			want:    1,
		},
		{
			name:    "deleting a known pod signals",
			initial: []any{pod("a", node)},
			op:      func(s *podStore) error { return s.Delete(pod("a", node)) },
			want:    2,
		},
		{
			name:    "resync signals nothing",
			initial: []any{pod("a", node)},
			op:      func(s *podStore) error { return s.Resync() },
			want:    1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newPodStore(node)
			if err := s.Replace(tt.initial, "1"); err != nil {
				t.Fatal(err)
			}
			if err := tt.op(s); err != nil {
				t.Fatal(err)
			}
			if s.changes != tt.want {
				t.Fatalf("changes = %d, want %d", s.changes, tt.want)
			}
		})
	}
}

func TestStoreSignalsNothingBeforeTheFirstList(t *testing.T) {
	s := newPodStore(node)
	if err := s.Add(pod("a", node)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.changed:
		t.Fatal("the store signalled before its first list")
	default:
	}
}

func TestStoreRejectsWhatIsNotAPod(t *testing.T) {
	if err := newPodStore(node).Add(&corev1.Node{}); err == nil {
		t.Fatal("Add(*v1.Node) = nil, want an error")
	}
}

func TestSnapshotIsACopy(t *testing.T) {
	s := newPodStore(node)
	if err := s.Replace([]any{pod("a", node)}, "1"); err != nil {
		t.Fatal(err)
	}
	snap := s.snapshot()
	snap[0].Annotations = map[string]string{"mutated": "yes"}
	if got := s.snapshot()[0].Annotations; got != nil {
		t.Fatalf("store pod annotations = %v after the receiver mutated its copy", got)
	}
}
