package sources

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var epoch = time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)

// pod builds a pod named name with UID "uid-<name>" and applies opts.
func pod(name string, opts ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1"}}},
	}
	for _, opt := range opts {
		opt(p)
	}
	return p
}

func withImage(image string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Image = image }
}

func withLabel(k, v string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Labels = map[string]string{k: v} }
}

func withAnnotation(k, v string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}

func withPhase(phase corev1.PodPhase) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Status.Phase = phase }
}

func withDeletion(grace int64) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		ts := metav1.NewTime(epoch)
		p.DeletionTimestamp = &ts
		p.DeletionGracePeriodSeconds = &grace
	}
}

func withVersion(rv string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.ResourceVersion = rv }
}

func withUID(uid string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.UID = types.UID(uid) }
}

// step is one snapshot from one source, at epoch+at, and the updates it
// must produce, written as "OP source: name name".
type step struct {
	source string
	at     time.Duration
	pods   []*corev1.Pod
	want   []string
	// wantSeen maps a pod name in this step's updates to the offset from
	// epoch its config.seen annotation must carry.
	wantSeen map[string]time.Duration
}

func describe(updates []PodUpdate) []string {
	var out []string
	for _, u := range updates {
		names := make([]string, len(u.Pods))
		for i, p := range u.Pods {
			names[i] = p.Name
		}
		out = append(out, fmt.Sprintf("%s %s: %s", u.Op, u.Source, strings.Join(names, " ")))
	}
	return out
}

func TestStoreMerge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps []step
	}{
		{"A new UID is an ADD.", []step{
			{source: "file", pods: []*corev1.Pod{pod("a"), pod("b")}, want: []string{"ADD file: a b"}},
		}},
		{"An empty first snapshot emits nothing.", []step{
			{source: "file", pods: nil, want: nil},
		}},
		{"An identical snapshot emits nothing.", []step{
			{source: "file", pods: []*corev1.Pod{pod("a")}, want: []string{"ADD file: a"}},
			{source: "file", at: time.Second, pods: []*corev1.Pod{pod("a")}, want: nil},
		}},
		{"A changed spec is an UPDATE.", []step{
			{source: "file", pods: []*corev1.Pod{pod("a")}, want: []string{"ADD file: a"}},
			{source: "file", pods: []*corev1.Pod{pod("a", withImage("busybox:2"))}, want: []string{"UPDATE file: a"}},
		}},
		{"A changed label is an UPDATE.", []step{
			{source: "api", pods: []*corev1.Pod{pod("a", withLabel("k", "1"))}, want: []string{"ADD api: a"}},
			{source: "api", pods: []*corev1.Pod{pod("a", withLabel("k", "2"))}, want: []string{"UPDATE api: a"}},
		}},
		{"A changed annotation is an UPDATE.", []step{
			{source: "api", pods: []*corev1.Pod{pod("a")}, want: []string{"ADD api: a"}},
			{source: "api", pods: []*corev1.Pod{pod("a", withAnnotation("x", "y"))}, want: []string{"UPDATE api: a"}},
		}},
		{"A change to the local annotations alone emits nothing.", []step{
			{source: "api", pods: []*corev1.Pod{pod("a")}, want: []string{"ADD api: a"}},
			{source: "api", pods: []*corev1.Pod{pod("a", withAnnotation(AnnotationSeen, "yesterday"),
				withAnnotation(AnnotationSource, "elsewhere"), withAnnotation(AnnotationMirror, "h"))}, want: nil},
		}},
		{"A status-only change is a RECONCILE.", []step{
			{source: "api", pods: []*corev1.Pod{pod("a", withPhase(corev1.PodPending))}, want: []string{"ADD api: a"}},
			{source: "api", pods: []*corev1.Pod{pod("a", withPhase(corev1.PodRunning))}, want: []string{"RECONCILE api: a"}},
		}},
		{"A spec and status change is an UPDATE only.", []step{
			{source: "api", pods: []*corev1.Pod{pod("a")}, want: []string{"ADD api: a"}},
			{source: "api", pods: []*corev1.Pod{pod("a", withImage("x:1"), withPhase(corev1.PodRunning))}, want: []string{"UPDATE api: a"}},
		}},
		{"An API server pod at the resource version already delivered is not compared again.", []step{
			{source: "api", pods: []*corev1.Pod{pod("a", withVersion("7"))}, want: []string{"ADD api: a"}},
			// The API server never sends two contents under one version;
			// a changed image here shows that the content is not compared.
			{source: "api", pods: []*corev1.Pod{pod("a", withVersion("7"), withImage("x:2"))}, want: nil},
		}},
		{"An API server pod at a new resource version is compared.", []step{
			{source: "api", pods: []*corev1.Pod{pod("a", withVersion("7"))}, want: []string{"ADD api: a"}},
			{source: "api", pods: []*corev1.Pod{pod("a", withVersion("8"))}, want: nil},
			{source: "api", pods: []*corev1.Pod{pod("a", withVersion("9"), withPhase(corev1.PodRunning))}, want: []string{"RECONCILE api: a"}},
			{source: "api", pods: []*corev1.Pod{pod("a", withVersion("10"), withImage("x:2"), withPhase(corev1.PodRunning))}, want: []string{"UPDATE api: a"}},
		}},
		{"A file pod is compared whatever its resource version says.", []step{
			{source: "file", pods: []*corev1.Pod{pod("a", withVersion("1"))}, want: []string{"ADD file: a"}},
			{source: "file", pods: []*corev1.Pod{pod("a", withVersion("1"), withImage("x:2"))}, want: []string{"UPDATE file: a"}},
		}},
		{"A UID another source delivered is held back, and added when that source drops it.", []step{
			{source: "file", pods: []*corev1.Pod{pod("a")}, want: []string{"ADD file: a"}},
			{source: "api", at: time.Second, pods: []*corev1.Pod{pod("b", withUID("uid-a")), pod("c")}, want: []string{"ADD api: c"}},
			{source: "api", at: 2 * time.Second, pods: []*corev1.Pod{pod("b", withUID("uid-a")), pod("c")}, want: nil},
			{source: "file", at: 3 * time.Second, pods: nil, want: []string{"REMOVE file: a", "ADD api: b"},
				wantSeen: map[string]time.Duration{"b": 3 * time.Second}},
			{source: "file", at: 4 * time.Second, pods: []*corev1.Pod{pod("a")}, want: nil},
			{source: "api", at: 5 * time.Second, pods: []*corev1.Pod{pod("c")}, want: []string{"REMOVE api: b", "ADD file: a"}},
		}},
		{"A held-back pod dropped by its own source is never added.", []step{
			{source: "file", pods: []*corev1.Pod{pod("a")}, want: []string{"ADD file: a"}},
			{source: "api", pods: []*corev1.Pod{pod("b", withUID("uid-a"))}, want: nil},
			{source: "api", pods: nil, want: nil},
			{source: "file", pods: nil, want: []string{"REMOVE file: a"}},
		}},
		{"A newly set deletion timestamp is a DELETE.", []step{
			{source: "api", pods: []*corev1.Pod{pod("a")}, want: []string{"ADD api: a"}},
			{source: "api", pods: []*corev1.Pod{pod("a", withDeletion(30))}, want: []string{"DELETE api: a"}},
		}},
		{"A shorter grace period on a deleted pod is another DELETE.", []step{
			{source: "api", pods: []*corev1.Pod{pod("a", withDeletion(30))}, want: []string{"ADD api: a"}},
			{source: "api", pods: []*corev1.Pod{pod("a", withDeletion(5))}, want: []string{"DELETE api: a"}},
		}},
		{"A UID gone from the snapshot is a REMOVE.", []step{
			{source: "file", pods: []*corev1.Pod{pod("a"), pod("b")}, want: []string{"ADD file: a b"}},
			{source: "file", pods: []*corev1.Pod{pod("b")}, want: []string{"REMOVE file: a"}},
		}},
		{"A pod whose UID changed is a REMOVE and an ADD.", []step{
			{source: "file", pods: []*corev1.Pod{pod("a")}, want: []string{"ADD file: a"}},
			{source: "file", pods: []*corev1.Pod{pod("a", withUID("new"))}, want: []string{"REMOVE file: a", "ADD file: a"}},
		}},
		{"Updates of one snapshot come as REMOVE, ADD, UPDATE, DELETE, RECONCILE.", []step{
			{source: "api", pods: []*corev1.Pod{pod("r"), pod("u"), pod("d"), pod("s")}, want: []string{"ADD api: r u d s"}},
			{source: "api", pods: []*corev1.Pod{pod("s", withPhase(corev1.PodRunning)), pod("d", withDeletion(1)), pod("u", withImage("x:2")), pod("n")},
				want: []string{"REMOVE api: r", "ADD api: n", "UPDATE api: u", "DELETE api: d", "RECONCILE api: s"}},
		}},
		{"Two sources are independent.", []step{
			{source: "file", pods: []*corev1.Pod{pod("a")}, want: []string{"ADD file: a"}},
			{source: "api", pods: []*corev1.Pod{pod("b")}, want: []string{"ADD api: b"}},
			{source: "api", pods: nil, want: []string{"REMOVE api: b"}},
			{source: "file", pods: []*corev1.Pod{pod("a")}, want: nil},
		}},
		{"The seen time is the first sighting and survives updates.", []step{
			{source: "file", at: time.Second, pods: []*corev1.Pod{pod("a")}, want: []string{"ADD file: a"},
				wantSeen: map[string]time.Duration{"a": time.Second}},
			{source: "file", at: time.Minute, pods: []*corev1.Pod{pod("a", withImage("x:2")), pod("b")},
				want:     []string{"ADD file: b", "UPDATE file: a"},
				wantSeen: map[string]time.Duration{"a": time.Second, "b": time.Minute}},
			{source: "file", at: time.Hour, pods: []*corev1.Pod{pod("a", withImage("x:2"), withPhase(corev1.PodRunning))},
				want:     []string{"REMOVE file: b", "RECONCILE file: a"},
				wantSeen: map[string]time.Duration{"a": time.Second}},
		}},
		{"A second pod with the same name or UID in one snapshot is dropped.", []step{
			{source: "file", pods: []*corev1.Pod{pod("a"), pod("a", withUID("other")), pod("b", withUID("uid-a")), pod("c", withUID(""))},
				want: []string{"ADD file: a"}},
		}},
		{"A pod whose UID, name or namespace is not a single path element is dropped, whatever its source.", []step{
			{source: "api", pods: []*corev1.Pod{pod("a"), pod("b", withUID("x/../../../somewhere")), pod("c", withUID("..")),
				pod("d/e"), pod("f", func(p *corev1.Pod) { p.Namespace = ".." }), pod("g", func(p *corev1.Pod) { p.Namespace = "" }),
				pod("h", withUID("a\x00b"))},
				want: []string{"ADD api: a"}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(logr.Discard())
			for i, st := range tc.steps {
				got := s.merge(st.source, st.pods, epoch.Add(st.at))
				if d := describe(got); strings.Join(d, "\n") != strings.Join(st.want, "\n") {
					t.Fatalf("step %d: got updates %q, want %q", i, d, st.want)
				}
				checkStamps(t, i, st, got)
			}
		})
	}
}

func checkStamps(t *testing.T, i int, st step, got []PodUpdate) {
	t.Helper()
	for _, u := range got {
		for _, p := range u.Pods {
			if src := p.Annotations[AnnotationSource]; src != u.Source {
				t.Errorf("step %d: pod %s has source annotation %q, want its update's %q", i, p.Name, src, u.Source)
			}
			want, ok := st.wantSeen[p.Name]
			if !ok {
				continue
			}
			if seen := p.Annotations[AnnotationSeen]; seen != epoch.Add(want).Format(time.RFC3339Nano) {
				t.Errorf("step %d: pod %s has seen annotation %q, want epoch+%s", i, p.Name, seen, want)
			}
		}
	}
}

func TestStoreMergeReturnsCopies(t *testing.T) {
	t.Parallel()
	s := newStore(logr.Discard())
	in := pod("a")
	got := s.merge("file", []*corev1.Pod{in}, epoch)
	if len(got) != 1 || got[0].Pods[0] == in {
		t.Fatalf("merge returned %v; want one update holding a copy of the pod", describe(got))
	}
	got[0].Pods[0].Spec.Containers[0].Image = "changed:1"
	got[0].Pods[0].Labels = map[string]string{"changed": "true"}
	if again := s.merge("file", []*corev1.Pod{pod("a")}, epoch); len(again) != 0 {
		t.Fatalf("changing a received pod changed the store: got %q", describe(again))
	}
}
