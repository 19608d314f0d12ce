package sources

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// fuzzBytes reads a fuzzer's input as a stream of small choices; past its
// end every choice is the first one.
type fuzzBytes struct{ data []byte }

func (b *fuzzBytes) intn(n int) int {
	if len(b.data) == 0 || n <= 1 {
		return 0
	}
	v := b.data[0]
	b.data = b.data[1:]
	return int(v) % n
}

func (b *fuzzBytes) done() bool { return len(b.data) == 0 }

// fuzzSnapshot builds one source's snapshot of up to 7 pods from a small
// set of UIDs and names, so that the fuzzer meets duplicates, renames,
// edits, status changes, deletions and nil pods.
func fuzzSnapshot(b *fuzzBytes) []*corev1.Pod {
	var pods []*corev1.Pod
	for range b.intn(8) {
		if b.intn(16) == 0 {
			pods = append(pods, nil)
			continue
		}
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name:      []string{"a", "b", "c", "d"}[b.intn(4)],
				Namespace: []string{"default", "default", "kube-system", ".."}[b.intn(4)],
				UID:       types.UID([]string{"", "u0", "u1", "u2", "u3", "u4", "u5", "u/../x"}[b.intn(8)]),
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: []string{"x:1", "x:2"}[b.intn(2)]}}},
		}
		switch b.intn(4) {
		case 1:
			p.Labels = map[string]string{"app": "web"}
		case 2:
			p.Annotations = map[string]string{"note": "hi"}
		case 3:
			p.Annotations = map[string]string{AnnotationSeen: "forged", AnnotationSource: "forged"}
		}
		p.Status.Phase = []corev1.PodPhase{"", corev1.PodRunning}[b.intn(2)]
		if b.intn(6) == 0 {
			ts := metav1.NewTime(epoch)
			grace := int64(b.intn(3))
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &ts, &grace
		}
		pods = append(pods, p)
	}
	return pods
}

// admitted is the set of UIDs the kubelet keeps from a snapshot: the first
// pod of each UID and of each namespace/name, skipping nil pods, pods
// without a UID and pods whose UID or namespace is not a single path
// element.
func admitted(snapshot []*corev1.Pod) map[types.UID]bool {
	uids, names := map[types.UID]bool{}, map[string]bool{}
	for _, p := range snapshot {
		if p == nil || p.UID == "" || strings.Contains(string(p.UID), "/") || p.Namespace == ".." || uids[p.UID] || names[podKey(p)] {
			continue
		}
		uids[p.UID], names[podKey(p)] = true, true
	}
	return uids
}

// FuzzMerge feeds arbitrary sequences of snapshots from three sources to the
// Mux's merge. After every step every pod UID is in exactly one state:
// absent, or delivered by exactly one source (an update names a UID of a
// source at most once, ADD only a UID that was absent, every other op only
// one that source delivered); what was delivered is what the store holds;
// each source's last snapshot, filtered as the kubelet filters it, is what
// it delivered plus what it holds back because another source delivered
// the UID first. Merging the same snapshot again delivers nothing, even
// after the receiver changed the pods it got, and config.seen keeps the
// time of the ADD.
func FuzzMerge(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 3, 1, 0, 1, 0, 0, 0, 1, 2, 1, 0, 1, 0, 0, 0, 0, 0})
	f.Add([]byte{1, 7, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 2, 1, 2, 2, 2, 1, 0, 0, 0, 0, 0})
	f.Add([]byte("three sources, duplicate names and UIDs, deletions"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := newStore(logr.Discard())
		b := &fuzzBytes{data: data}
		srcs := []string{FileSource, HTTPSource, APIServerSource}
		model := map[string]map[types.UID]*corev1.Pod{}
		wanted := map[string]map[types.UID]bool{}
		for _, src := range srcs {
			model[src], wanted[src] = map[types.UID]*corev1.Pod{}, map[types.UID]bool{}
		}
		for step := 0; step < 64 && !b.done(); step++ {
			src := srcs[b.intn(len(srcs))]
			snapshot := fuzzSnapshot(b)
			again := copySnapshot(snapshot)
			wanted[src] = admitted(again)
			now := epoch.Add(time.Duration(step) * time.Second)
			updates := s.merge(src, snapshot, now)
			applyUpdates(t, step, model, updates, now)
			checkHolds(t, step, s, model, wanted)
			for _, u := range updates {
				for _, p := range u.Pods {
					p.Spec.Containers[0].Image = "changed-by-the-receiver"
					p.Annotations["receiver"] = "x"
				}
			}
			if repeat := s.merge(src, again, now.Add(time.Second)); len(repeat) != 0 {
				t.Fatalf("step %d: the same %s snapshot again gave updates %s", step, src, strings.Join(describe(repeat), "; "))
			}
		}
	})
}

// applyUpdates moves the model's pods between states as the updates say,
// failing on an update that is not allowed from the state a pod is in.
func applyUpdates(t *testing.T, step int, model map[string]map[types.UID]*corev1.Pod, updates []PodUpdate, now time.Time) {
	t.Helper()
	named := map[string]Op{}
	for _, u := range updates {
		m, ok := model[u.Source]
		if !ok || len(u.Pods) == 0 {
			t.Fatalf("step %d: update %s from %q with %d pods, want a non-empty one from a known source", step, u.Op, u.Source, len(u.Pods))
		}
		for _, p := range u.Pods {
			key := u.Source + "/" + string(p.UID)
			if op, twice := named[key]; twice {
				t.Fatalf("step %d: pod %s is in %s and %s at once", step, key, op, u.Op)
			}
			named[key] = u.Op
			prev, known := m[p.UID]
			if known == (u.Op == ADD) {
				t.Fatalf("step %d: %s of pod %s, which was delivered before: %t", step, u.Op, key, known)
			}
			if p.Annotations[AnnotationSource] != u.Source {
				t.Fatalf("step %d: %s pod %s has source %q", step, u.Op, key, p.Annotations[AnnotationSource])
			}
			if (p.DeletionTimestamp != nil) != (u.Op == DELETE) && u.Op != ADD && u.Op != REMOVE && u.Op != RECONCILE {
				t.Fatalf("step %d: %s of pod %s with deletionTimestamp %v", step, u.Op, key, p.DeletionTimestamp)
			}
			wantSeen := now.UTC().Format(time.RFC3339Nano)
			if known {
				wantSeen = prev.Annotations[AnnotationSeen]
			}
			if u.Op != REMOVE && p.Annotations[AnnotationSeen] != wantSeen {
				t.Fatalf("step %d: %s of pod %s seen %q, want %q", step, u.Op, key, p.Annotations[AnnotationSeen], wantSeen)
			}
			if u.Op == REMOVE {
				delete(m, p.UID)
			} else {
				m[p.UID] = p.DeepCopy()
			}
		}
	}
}

// checkHolds checks that each UID is delivered by one source at most, that
// the store holds what was delivered, and that each source delivered or
// held back exactly what the kubelet's filtering keeps of its snapshot.
func checkHolds(t *testing.T, step int, s *store, model map[string]map[types.UID]*corev1.Pod, wanted map[string]map[types.UID]bool) {
	t.Helper()
	owner := map[types.UID]string{}
	for src, pods := range model {
		for uid := range pods {
			if other, ok := owner[uid]; ok {
				t.Fatalf("step %d: pod %s is delivered by %s and %s", step, uid, other, src)
			}
			owner[uid] = src
			if s.pods[src][uid] == nil {
				t.Fatalf("step %d: %s delivered pod %s, which the store does not hold", step, src, uid)
			}
		}
		if len(s.pods[src]) != len(pods) {
			t.Fatalf("step %d: %s delivered %d pods, the store holds %d", step, src, len(pods), len(s.pods[src]))
		}
	}
	for src, want := range wanted {
		for uid := range want {
			_, held := s.shadowed[src][uid]
			if (model[src][uid] != nil) == held {
				t.Fatalf("step %d: %s pod %s: delivered %t, held back %t; want exactly one", step, src, uid, model[src][uid] != nil, held)
			}
			if held && owner[uid] == "" {
				t.Fatalf("step %d: %s holds back pod %s, which no source delivers", step, src, uid)
			}
		}
		if got := len(model[src]) + len(s.shadowed[src]); got != len(want) {
			t.Fatalf("step %d: %s delivered or holds back %d pods, want %d", step, src, got, len(want))
		}
	}
}

func copySnapshot(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy() // nil stays nil
	}
	return out
}
