package apiserver

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/sources"
)

func TestNameIsAPI(t *testing.T) {
	if got := New(fake.NewClientset(), clocktesting.NewFakeClock(epoch), logr.Discard(), Config{NodeName: node}).Name(); got != sources.APIServerSource {
		t.Fatalf("Name() = %q, want %q", got, sources.APIServerSource)
	}
}

func TestRunRejectsWhatCannotWork(t *testing.T) {
	tests := []struct {
		name   string
		client bool
		cfg    Config
		want   string
	}{
		{name: "a config without a node name is rejected", client: true, cfg: Config{}, want: "nodeName is required"},
		{name: "a negative debounce is rejected", client: true, cfg: Config{NodeName: node, Debounce: -time.Second}, want: "debounce"},
		{name: "a source without a client is rejected", cfg: Config{NodeName: node}, want: "no Kubernetes client"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := New(nil, clocktesting.NewFakeClock(epoch), logr.Discard(), tt.cfg)
			if tt.client {
				src.client = fake.NewClientset()
			}
			err := src.Run(context.Background(), make(chan []*corev1.Pod))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestInitialSnapshot(t *testing.T) {
	tests := []struct {
		name string
		pods []runtime.Object
		want []string
	}{
		{name: "no pods give an empty snapshot", want: []string{}},
		{
			name: "the node's pods are sent, sorted, without pods of other nodes",
			pods: []runtime.Object{pod("b", node), pod("a", node), pod("elsewhere", "node2"), pod("unscheduled", "")},
			want: []string{"a", "b"},
		},
		{
			name: "mirror pods are sent like any other pod",
			pods: []runtime.Object{mirror(pod("static-node1", node))},
			want: []string{"static-node1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, fake.NewClientset(tt.pods...))
			// The first snapshot needs no clock step: it goes out on sync.
			if got := h.next(); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("first snapshot = %v, want %v", got, tt.want)
			}
		})
	}
}

func mirror(p *corev1.Pod) *corev1.Pod {
	p.Annotations = map[string]string{sources.AnnotationMirror: "hash"}
	return p
}

func TestChangesProduceSnapshots(t *testing.T) {
	client := fake.NewClientset(pod("a", node))
	h := start(t, client)
	pods := client.CoreV1().Pods("default")
	ctx := context.Background()
	if got := h.next(); !reflect.DeepEqual(got, []string{"a"}) {
		t.Fatalf("first snapshot = %v, want [a]", got)
	}

	if _, err := pods.Create(ctx, pod("b", node), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := h.flush(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("snapshot after adding b = %v, want [a b]", got)
	}

	b := pod("b", node)
	b.Labels = map[string]string{"app": "web"}
	if _, err := pods.Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := h.updatesAfterFlush()
	if len(got) != 2 || got[1].Labels["app"] != "web" {
		t.Fatalf("snapshot after updating b = %v, want b labelled app=web", got)
	}

	if err := pods.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := h.flush(); !reflect.DeepEqual(got, []string{"b"}) {
		t.Fatalf("snapshot after deleting a = %v, want [b]", got)
	}
}

// updatesAfterFlush is flush returning the pods themselves.
func (h *harness) updatesAfterFlush() []*corev1.Pod {
	h.t.Helper()
	h.until("debounce timer armed", h.clk.HasWaiters)
	h.clk.Step(time.Second)
	select {
	case pods := <-h.updates:
		return pods
	case <-time.After(waitLimit):
		h.t.Fatal("no snapshot sent")
		return nil
	}
}

func TestBurstGivesOneSnapshot(t *testing.T) {
	client := fake.NewClientset()
	h := start(t, client)
	h.next()
	for _, name := range []string{"a", "b", "c"} {
		if _, err := client.CoreV1().Pods("default").Create(context.Background(), pod(name, node), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.until("store holds the burst", func() bool { return h.storeLen() == 3 })
	if got := h.flush(); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("snapshot after burst = %v, want [a b c]", got)
	}
	select {
	case extra := <-h.updates:
		t.Fatalf("a second snapshot %v followed the burst", names(extra))
	default:
	}
	if h.clk.HasWaiters() {
		t.Fatal("a debounce timer is still armed after the burst was sent")
	}
}

func TestPodsOfOtherNodesAreExcluded(t *testing.T) {
	client := fake.NewClientset(pod("other", "node2"))
	// The premise: client-go's fake ignores field selectors, so the source
	// must filter on its own.
	list, err := client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("fake List with a field selector = %v, %v; the test expects the fake to ignore the selector", list, err)
	}
	h := start(t, client)
	if got := h.next(); len(got) != 0 {
		t.Fatalf("first snapshot = %v, want none of node2's pods", got)
	}
	before := h.changes()
	if _, err := client.CoreV1().Pods("default").Create(context.Background(), pod("other2", "node2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Pods("default").Create(context.Background(), pod("mine", node), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := h.flush(); !reflect.DeepEqual(got, []string{"mine"}) {
		t.Fatalf("snapshot = %v, want [mine]", got)
	}
	if got := h.changes() - before; got != 1 {
		t.Fatalf("store signalled %d changes, want 1 (node2's pod is no change)", got)
	}
}

func TestListAndWatchUseTheFieldSelector(t *testing.T) {
	client := fake.NewClientset(pod("a", node))
	h := start(t, client)
	h.next()
	h.until("watch started", func() bool { return countVerb(client, "watch") > 0 })
	h.stop()
	for _, a := range client.Actions() {
		if a.GetResource().Resource != "pods" {
			continue
		}
		var selector string
		switch act := a.(type) {
		case k8stesting.ListActionImpl:
			selector = act.GetListRestrictions().Fields.String()
		case k8stesting.WatchActionImpl:
			selector = act.GetWatchRestrictions().Fields.String()
		default:
			t.Errorf("unexpected %s on pods", a.GetVerb())
			continue
		}
		if a.GetNamespace() != "" {
			t.Errorf("%s in namespace %q, want all namespaces", a.GetVerb(), a.GetNamespace())
		}
		if selector != "spec.nodeName="+node {
			t.Errorf("%s with field selector %q, want spec.nodeName=%s", a.GetVerb(), selector, node)
		}
	}
	if countVerb(client, "list") == 0 {
		t.Error("the source never listed pods")
	}
}

func countVerb(client *fake.Clientset, verb string) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == "pods" {
			n++
		}
	}
	return n
}

func TestRunStopsWhileTheMuxIsNotReading(t *testing.T) {
	h := start(t, fake.NewClientset(pod("a", node)))
	h.until("snapshot ready", func() bool { return h.changes() > 0 })
	h.stop() // nobody reads updates: Run must still return
}
