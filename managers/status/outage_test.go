package status

import (
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
)

var errTooManyRequests = apierrors.NewTooManyRequests("slow down", 1)

// unreachable makes every request fail without an answer while down is set.
func unreachable(f *fixture) *atomic.Bool {
	var down atomic.Bool
	f.client.PrependReactor("*", "pods", func(k8stesting.Action) (bool, apiruntime.Object, error) {
		if down.Load() {
			return true, nil, errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
		}
		return false, nil, nil
	})
	return &down
}

// patchedNames returns the names of the pods patched, in order.
func (f *fixture) patchedNames() []string {
	var out []string
	for _, p := range f.patches() {
		out = append(out, p.GetName())
	}
	return out
}

func TestStatusesSetWhileTheAPIWasAwayAreWrittenOldestFirst(t *testing.T) {
	var pods []*corev1.Pod
	for i := range 6 {
		pods = append(pods, apiPod(fmt.Sprintf("p%d", i), types.UID(fmt.Sprint("uid-", i))))
	}
	f := newFixture(t, pods...)
	down := unreachable(f)
	down.Store(true)
	// Set in an order that is neither the names' nor the UIDs'.
	order := []int{3, 0, 5, 1, 4, 2}
	var want []string
	for _, i := range order {
		f.m.SetPodStatus(pods[i], running())
		want = append(want, pods[i].Name)
	}
	f.sync(false)
	if got := f.patchedNames(); len(got) != 0 {
		t.Fatalf("patched %v with the API server away", got)
	}
	if len(f.m.retries) != len(pods) || !f.m.unreachable {
		t.Fatalf("retries %d unreachable %v, want every pod backing off", len(f.m.retries), f.m.unreachable)
	}
	// The API server stays away for a while: every retry fails.
	for range 5 {
		f.clk.Step(maxRetry)
		f.sync(false)
	}
	f.actions()
	down.Store(false)
	f.clk.Step(maxRetry)
	f.sync(false)
	if got := f.patchedNames(); !reflect.DeepEqual(got, want) {
		t.Fatalf("patches after the API server came back = %v, want the order the statuses were set %v", got, want)
	}
	if len(f.m.retries) != 0 {
		t.Fatalf("retries left after the catch-up: %v", f.m.retries)
	}
}

func TestTheFirstAnswerMakesEveryBackoffDue(t *testing.T) {
	a, b := apiPod("a", "uid-a"), apiPod("b", "uid-b")
	f := newFixture(t, a, b)
	down := unreachable(f)
	down.Store(true)
	f.m.SetPodStatus(a, running())
	f.sync(false)
	f.clk.Step(time.Minute)
	f.m.SetPodStatus(b, running())
	f.sync(false) // a is due again and fails once more: its delay doubles
	down.Store(false)
	// Only b is due (its first retry); a waits its longer backoff, yet the
	// answer to b makes it due at once.
	f.clk.Step(minRetry)
	f.sync(false)
	if _, ok := f.m.retries["uid-a"]; !ok {
		t.Fatal("a is not waiting: the test does not show the reset")
	}
	if !f.m.retries["uid-a"].at.Equal(f.clk.Now()) {
		t.Fatalf("a's retry is at %s, want now (%s) after the API server answered", f.m.retries["uid-a"].at, f.clk.Now())
	}
	f.sync(false)
	if got := f.apiPod("a").Status.Phase; got != corev1.PodRunning {
		t.Fatalf("a's phase = %s after the reset, want Running", got)
	}
}

func TestAnErrorAnsweredByTheServerIsNoOutage(t *testing.T) {
	if !answered(fmt.Errorf("wrapped: %w", errTooManyRequests)) || answered(errors.New("connection refused")) {
		t.Fatal("answered() does not tell a Status error from a transport error")
	}
}
