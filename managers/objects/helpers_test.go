package objects

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// epoch is where every fake clock starts.
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// waitLimit bounds every wait for another goroutine; tests never sleep.
const waitLimit = 10 * time.Second

// until waits for cond, which another goroutine makes true.
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

func configMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func secret(ns, name string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

// podUsing returns a pod of ns whose container takes env from configMap
// cm and secret sec (either may be empty).
func podUsing(ns, name, cm, sec string) *corev1.Pod {
	c := corev1.Container{Name: "c", Image: "busybox"}
	if cm != "" {
		c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}})
	}
	if sec != "" {
		c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: sec}}})
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{c}},
	}
}

// running is a WatchManager whose Run goroutine the test owns.
type running struct {
	m      *WatchManager
	client *fake.Clientset
	clk    *clocktesting.FakeClock
	cancel context.CancelFunc
	done   chan error
}

// newManager returns a WatchManager over client; run starts its Run.
func newManager(t *testing.T, client *fake.Clientset, run bool) *running {
	t.Helper()
	r := &running{client: client, clk: clocktesting.NewFakeClock(epoch), done: make(chan error, 1)}
	r.m = NewWatchManager(client, r.clk, logr.Discard(), Config{})
	r.m.backoff = &wait.Backoff{Duration: time.Millisecond, Cap: time.Millisecond, Steps: 1 << 20, Factor: 1}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	if !run {
		close(r.done)
		t.Cleanup(cancel)
		return r
	}
	go func() { r.done <- r.m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("Run returned %v, want nil", err)
			}
		case <-time.After(waitLimit):
			t.Error("Run did not return after its context ended")
		}
	})
	return r
}

// synced waits until the watch of namespace/name in c has listed.
func synced(t *testing.T, c *kindCache, namespace, name string) {
	t.Helper()
	until(t, "watch of "+namespace+"/"+name+" synced", func() bool {
		c.mu.Lock()
		e := c.entries[objectKey{namespace, name}]
		c.mu.Unlock()
		if e == nil {
			return false
		}
		select {
		case <-e.store.synced:
			return true
		default:
			return false
		}
	})
}

// entryRefs returns the reference count of namespace/name in c, 0 when it
// is not registered.
func entryRefs(c *kindCache, namespace, name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[objectKey{namespace, name}]; e != nil {
		return e.refs
	}
	return 0
}
