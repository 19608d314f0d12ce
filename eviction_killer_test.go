package nodekit

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/podworkers"
)

// stoppingWorkers terminates every killed pod at once and then, like
// SyncTerminatedPod, tears its volumes down when teardown is closed.
type stoppingWorkers struct {
	podworkers.Workers
	rootDir  string
	teardown chan struct{}
	mu       sync.Mutex
	evicted  []podworkers.UpdatePodOptions
}

func (w *stoppingWorkers) UpdatePod(o podworkers.UpdatePodOptions) {
	w.mu.Lock()
	w.evicted = append(w.evicted, o)
	w.mu.Unlock()
	close(o.KillPodOptions.CompletedCh)
	go func() {
		<-w.teardown
		_ = os.RemoveAll(filepath.Join(w.rootDir, "pods", string(o.Pod.UID), "volumes"))
	}()
}

func TestWorkerKillerWaitsForTheEvictedPodsVolumesToGo(t *testing.T) {
	root := t.TempDir()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: types.UID("u1")}}
	if err := os.MkdirAll(filepath.Join(root, "pods", "u1", "volumes", "kubernetes.io~empty-dir", "scratch"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := &stoppingWorkers{rootDir: root, teardown: make(chan struct{})}
	k := workerKiller{w: w, evict: true, rootDir: root, poll: time.Millisecond, wait: time.Minute}
	returned := make(chan struct{})
	go func() {
		_ = k.KillPod(context.Background(), pod, 1, func(*corev1.PodStatus) {})
		close(returned)
	}()
	select {
	case <-returned:
		t.Fatal("KillPod returned while the pod's volumes were still there")
	case <-time.After(50 * time.Millisecond): // many polls
	}
	close(w.teardown)
	select {
	case <-returned:
	case <-time.After(time.Minute):
		t.Fatal("KillPod did not return once the volumes were torn down")
	}
	o := w.evicted[0]
	if o.UpdateType != podworkers.SyncPodKill || !o.KillPodOptions.Evict || *o.KillPodOptions.PodTerminationGracePeriodSecondsOverride != 1 {
		t.Errorf("kill options %+v", o.KillPodOptions)
	}
}

func TestWorkerKillerGivesUpAfterItsWait(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "pods", "u1", "volumes"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := &stoppingWorkers{rootDir: root, teardown: make(chan struct{})} // not torn down before KillPod gives up
	t.Cleanup(func() { close(w.teardown) })                             // ends the fake's teardown goroutine
	k := workerKiller{w: w, evict: true, rootDir: root, poll: time.Millisecond, wait: 20 * time.Millisecond}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: types.UID("u1")}}
	if err := k.KillPod(context.Background(), pod, 1, func(*corev1.PodStatus) {}); err != nil {
		t.Fatal(err)
	}
}
