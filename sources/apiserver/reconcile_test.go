package apiserver

import (
	"context"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/sources"
)

// TestTheMuxReconcilesTheCheckpointByUID runs the source in a real Mux: the
// checkpoint's pods are ADDed while offline; when the API server answers, a
// pod still bound is at most a RECONCILE (never an UPDATE, REMOVE or ADD,
// so nothing restarts), a pod deleted meanwhile is a REMOVE, a new one an
// ADD.
func TestTheMuxReconcilesTheCheckpointByUID(t *testing.T) {
	kept := pod("kept", node)
	kept.Status.Phase = corev1.PodRunning // the status the node last saw
	dir := seedCheckpoint(t, kept, pod("deleted", node))
	fromAPI := withRV(pod("kept", node), "9")
	fromAPI.Status.Phase = corev1.PodRunning
	fromAPI.Status.Message = "changed while the node was away"
	client := fake.NewClientset(fromAPI, pod("new", node))
	o := newOutage(client)
	o.goDown()

	clk := clocktesting.NewFakeClock(epoch)
	src := New(client, clk, logr.Discard(), Config{NodeName: node, CheckpointDir: dir})
	src.backoff = &wait.Backoff{Duration: time.Millisecond, Cap: time.Millisecond, Steps: 1 << 20, Factor: 1}
	mux := sources.NewMux([]sources.Source{src}, clk, logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mux.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Mux.Run = %v", err)
		}
	}()
	o.nextList(t)
	if mux.SeenAllSources() {
		t.Fatal("the API source counts as seen before it sent anything")
	}
	var first sources.PodUpdate
	for got := false; !got; {
		clk.Step(DefaultOfflineAfter)
		select {
		case first = <-mux.Updates():
			got = true
		case <-time.After(10 * time.Millisecond):
		}
	}
	if first.Op != sources.ADD || !reflect.DeepEqual(names(first.Pods), []string{"deleted", "kept"}) {
		t.Fatalf("offline update = %s %v, want ADD [deleted kept]", first.Op, names(first.Pods))
	}
	until(t, "the source seen", mux.SeenAllSources)

	o.comeBack()
	want := map[sources.Op][]string{sources.REMOVE: {"deleted"}, sources.ADD: {"new"}, sources.RECONCILE: {"kept"}}
	got := map[sources.Op][]string{}
	for len(got) < len(want) {
		select {
		case u := <-mux.Updates():
			got[u.Op] = names(u.Pods)
		case <-time.After(waitLimit):
			t.Fatalf("updates after the server answered = %v, want %v", got, want)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("updates after the server answered = %v, want %v", got, want)
	}
}

func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}
