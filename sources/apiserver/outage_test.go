package apiserver

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// outage makes a fake clientset's pod lists fail while down is set and lets
// the test stop the current watch, as a lost connection does.
type outage struct {
	mu      sync.Mutex
	down    bool
	watcher watch.Interface
	lists   chan error
	watches chan struct{}
}

func newOutage(client *fake.Clientset) *outage {
	o := &outage{lists: make(chan error, 100), watches: make(chan struct{}, 100)}
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.down {
			err := errors.New("connection refused")
			o.lists <- err
			return true, nil, err
		}
		o.lists <- nil
		return false, nil, nil
	})
	client.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.down {
			return true, nil, errors.New("connection refused")
		}
		act := a.(k8stesting.WatchActionImpl)
		w, err := client.Tracker().Watch(a.GetResource(), a.GetNamespace(), act.ListOptions)
		o.watcher = w
		o.watches <- struct{}{}
		return true, w, err
	})
	return o
}

// goDown fails lists and watches and ends the current watch.
func (o *outage) goDown() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.down = true
	if o.watcher != nil {
		o.watcher.Stop()
	}
}

func (o *outage) comeBack() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.down = false
}

// nextList returns the result of the next list, or fails.
func (o *outage) nextList(t *testing.T) error {
	t.Helper()
	select {
	case err := <-o.lists:
		return err
	case <-time.After(waitLimit):
		t.Fatal("the source did not list again")
		return nil
	}
}

func (o *outage) nextWatch(t *testing.T) {
	t.Helper()
	select {
	case <-o.watches:
	case <-time.After(waitLimit):
		t.Fatal("the source did not watch again")
	}
}

func TestServerOutageSendsNothingAndRecovers(t *testing.T) {
	client := fake.NewClientset(pod("a", node))
	o := newOutage(client)
	h := start(t, client)
	if got := h.next(); !reflect.DeepEqual(got, []string{"a"}) {
		t.Fatalf("first snapshot = %v, want [a]", got)
	}
	o.nextList(t)
	o.nextWatch(t)
	before := h.changes()

	o.goDown()
	failures := 0
	for failures < 3 {
		if o.nextList(t) != nil {
			failures++
		}
	}
	o.comeBack()
	for err := o.nextList(t); err != nil; err = o.nextList(t) {
		// lists that failed before the server came back
	}
	o.nextWatch(t)
	// The relist happened before the new watch: it found the same pods.
	if got := h.changes(); got != before {
		t.Fatalf("store signalled %d changes across the outage, want none", got-before)
	}
	if h.clk.HasWaiters() {
		t.Fatal("a snapshot is pending after the outage")
	}

	if _, err := client.CoreV1().Pods("default").Create(context.Background(), pod("b", node), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := h.flush(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("snapshot after recovery = %v, want [a b]", got)
	}
}

func TestFailingInitialListSendsNothingUntilItSucceeds(t *testing.T) {
	client := fake.NewClientset(pod("a", node))
	fails := 3
	var mu sync.Mutex
	lists := make(chan struct{}, 100)
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		lists <- struct{}{}
		if fails > 0 {
			fails--
			return true, nil, apierrors.NewServiceUnavailable("starting")
		}
		return false, nil, nil
	})
	h := start(t, client)
	for range 3 {
		select {
		case <-lists:
		case <-time.After(waitLimit):
			t.Fatal("the source did not retry its list")
		}
		select {
		case got := <-h.updates:
			t.Fatalf("snapshot %v sent before the list succeeded", names(got))
		default:
		}
	}
	if got := h.next(); !reflect.DeepEqual(got, []string{"a"}) {
		t.Fatalf("first snapshot = %v, want [a]", got)
	}
}

func TestWatchErrorRelistsWithoutSnapshot(t *testing.T) {
	client := fake.NewClientset(pod("a", node))
	watchers := make(chan *watch.RaceFreeFakeWatcher, 10)
	client.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		w := watch.NewRaceFreeFake()
		watchers <- w
		return true, w, nil
	})
	h := start(t, client)
	h.next()
	var first *watch.RaceFreeFakeWatcher
	select {
	case first = <-watchers:
	case <-time.After(waitLimit):
		t.Fatal("the source did not watch")
	}
	before := h.changes()
	first.Error(&apierrors.NewResourceExpired("too old").ErrStatus)
	select {
	case <-watchers: // relisted and watching again
	case <-time.After(waitLimit):
		t.Fatal("the source did not watch again after a watch error")
	}
	if got := h.changes(); got != before {
		t.Fatalf("store signalled %d changes after a watch error, want none", got-before)
	}
	if countVerb(client, "list") < 2 {
		t.Fatalf("lists = %d, want a relist after the watch error", countVerb(client, "list"))
	}
}
