package nodekit

import (
	"context"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nodekit/nodekit/managers/prober"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestEventRecorderSendsEventsToTheAPIWhileItRuns(t *testing.T) {
	client := fake.NewClientset()
	r := newEventRecorder(eventRecorderParams{Client: client, Cfg: Config{NodeName: "node-a"}, Log: testr.New(t)})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}}
	r.Eventf(pod, corev1.EventTypeNormal, "Early", "before Run: log only")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	spin(t, "the recorder to start", func() bool { return r.api.Load() != nil })
	r.Eventf(noderuntime.ContainerRef(pod, "main"), corev1.EventTypeWarning, "Failed", "Error: %s", "volume cfg: type configMap is not supported yet")
	var got []corev1.Event
	spin(t, "the event to reach the API", func() bool {
		list, err := client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got = list.Items
		return len(got) > 0
	})
	e := got[0]
	if len(got) != 1 || e.Type != corev1.EventTypeWarning || e.Reason != "Failed" || e.Message != "Error: volume cfg: type configMap is not supported yet" ||
		e.Source.Component != "kubelet" || e.Source.Host != "node-a" || e.InvolvedObject.FieldPath != "spec.containers{main}" || e.InvolvedObject.UID != "u1" {
		t.Fatalf("events in the API = %+v", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if r.api.Load() != nil {
		t.Fatal("the API recorder is still set after Run returned")
	}
}

func TestEventRecorderWithoutAClientOnlyLogs(t *testing.T) {
	r := newEventRecorder(eventRecorderParams{Cfg: Config{NodeName: "node-a"}, Log: testr.New(t)})
	if err := r.Run(context.Background()); err != nil {
		t.Fatalf("Run without a client = %v, want nil at once", err)
	}
	r.Eventf(&corev1.Pod{}, corev1.EventTypeWarning, "Failed", "logged")
}

// staticResults is a prober.Results with fixed results.
type staticResults map[string]prober.Result

func (s staticResults) Get(id string) (prober.Result, bool) { r, ok := s[id]; return r, ok }
func (s staticResults) Updates() <-chan prober.Update       { return nil }

func TestProbeResultsAdaptToTheRuntimesView(t *testing.T) {
	id := func(s string) noderuntime.ContainerID { return noderuntime.ContainerID{Type: "containerd", ID: s} }
	res := staticResults{"containerd://ok": prober.Success, "containerd://bad": prober.Failure, "containerd://wait": prober.Unknown}
	startup, liveness := startupResults{res}, livenessResults{res}
	cases := []struct {
		id          string
		wantStartup noderuntime.StartupResult
		wantFailed  bool
	}{
		{"ok", noderuntime.StartupSucceeded, false},
		{"bad", noderuntime.StartupFailed, true},
		{"wait", noderuntime.StartupUnknown, false},
		{"none", noderuntime.StartupUnknown, false},
	}
	for _, tt := range cases {
		if got := startup.StartupResult(id(tt.id)); got != tt.wantStartup {
			t.Errorf("startup of %s = %v, want %v", tt.id, got, tt.wantStartup)
		}
		if got := liveness.LivenessFailed(id(tt.id)); got != tt.wantFailed {
			t.Errorf("liveness of %s failed = %v, want %v", tt.id, got, tt.wantFailed)
		}
	}
}

// spin yields until cond holds; the deadline only guards against a hang.
func spin(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		goruntime.Gosched()
	}
}
