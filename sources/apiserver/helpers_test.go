package apiserver

import (
	"context"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// epoch is where every fake clock starts.
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// waitLimit bounds every wait for another goroutine; tests never sleep.
const waitLimit = 10 * time.Second

const node = "node1"

func pod(name, nodeName string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

// harness runs a Source against a client and collects what it sends.
type harness struct {
	t       *testing.T
	clk     *clocktesting.FakeClock
	updates chan []*corev1.Pod
	store   chan *podStore
	st      *podStore
	cancel  context.CancelFunc
	done    chan error
	once    sync.Once
	src     *Source
}

func start(t *testing.T, client kubernetes.Interface) *harness {
	t.Helper()
	return startWith(t, client, Config{NodeName: node})
}

// startWith runs a Source with cfg against client.
func startWith(t *testing.T, client kubernetes.Interface, cfg Config) *harness {
	t.Helper()
	h := &harness{
		t:       t,
		clk:     clocktesting.NewFakeClock(epoch),
		updates: make(chan []*corev1.Pod),
		store:   make(chan *podStore, 1),
		done:    make(chan error, 1),
	}
	src := New(client, h.clk, logr.Discard(), cfg)
	h.src = src
	src.backoff = &wait.Backoff{Duration: time.Millisecond, Cap: time.Millisecond, Steps: 1 << 20, Factor: 1}
	src.onStore = func(s *podStore) { h.store <- s }
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- src.Run(ctx, h.updates) }()
	t.Cleanup(h.stop)
	select {
	case h.st = <-h.store:
	case err := <-h.done:
		t.Fatalf("Run returned %v before it built its store", err)
	}
	return h
}

// stop cancels Run and checks that it returns nil. Idempotent.
func (h *harness) stop() {
	h.once.Do(func() {
		h.cancel()
		select {
		case err := <-h.done:
			if err != nil {
				h.t.Errorf("Run returned %v, want nil", err)
			}
		case <-time.After(waitLimit):
			h.t.Error("Run did not return after its context ended")
		}
	})
}

// next returns the next snapshot, as sorted pod names.
func (h *harness) next() []string {
	h.t.Helper()
	select {
	case pods := <-h.updates:
		return names(pods)
	case <-time.After(waitLimit):
		h.t.Fatal("no snapshot sent")
		return nil
	}
}

// flush waits until the debounce timer is armed, fires it and returns the
// snapshot it sends.
func (h *harness) flush() []string {
	h.t.Helper()
	h.until("debounce timer armed", h.clk.HasWaiters)
	h.clk.Step(time.Second)
	return h.next()
}

// until waits for cond, which another goroutine makes true.
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}

// storeLen returns how many pods the source's store holds.
func (h *harness) storeLen() int {
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	return len(h.st.pods)
}

// changes returns how many changes the store has signalled.
func (h *harness) changes() int {
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	return h.st.changes
}

func names(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}
