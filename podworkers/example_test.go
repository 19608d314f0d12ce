package podworkers_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// printHandler prints each call; synced and finished tell the example when
// a step is done.
type printHandler struct {
	synced, finished chan struct{}
}

func (h printHandler) SyncPod(_ context.Context, t podworkers.UpdateType, pod, _ *corev1.Pod, _ *noderuntime.PodStatus) (bool, error) {
	fmt.Println("SyncPod", pod.Name, t)
	h.synced <- struct{}{}
	return false, nil
}

func (h printHandler) SyncTerminatingPod(_ context.Context, pod *corev1.Pod, _ *noderuntime.PodStatus, grace *int64, _ func(*corev1.PodStatus)) error {
	fmt.Println("SyncTerminatingPod", pod.Name, "grace", *grace)
	return nil
}

func (h printHandler) SyncTerminatingRuntimePod(_ context.Context, rp *noderuntime.Pod) error {
	fmt.Println("SyncTerminatingRuntimePod", rp.Name)
	return nil
}

func (h printHandler) SyncTerminatedPod(_ context.Context, pod *corev1.Pod, _ *noderuntime.PodStatus) error {
	fmt.Println("SyncTerminatedPod", pod.Name)
	close(h.finished)
	return nil
}

// freshCache always has a fresh status.
type freshCache struct{ clock clock.Clock }

func (c freshCache) GetNewerThan(_ context.Context, uid types.UID, _ time.Time) (*noderuntime.PodStatus, error) {
	return &noderuntime.PodStatus{ID: uid, TimeStamp: c.clock.Now()}, nil
}

// Example runs one pod through its life: created, killed with a shorter
// grace period, cleaned up.
func Example() {
	clk := clock.RealClock{}
	h := printHandler{synced: make(chan struct{}), finished: make(chan struct{})}
	w := podworkers.New(h, freshCache{clk}, podworkers.NewWorkQueue(clk), clk, nil, logr.Discard(), podworkers.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- w.Run(ctx) }()

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"}}
	w.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodCreate, Pod: pod})
	<-h.synced

	killed := make(chan struct{})
	five := int64(5)
	w.UpdatePod(podworkers.UpdatePodOptions{
		UpdateType:     podworkers.SyncPodKill,
		Pod:            pod,
		KillPodOptions: &podworkers.KillPodOptions{CompletedCh: killed, PodTerminationGracePeriodSecondsOverride: &five},
	})
	<-killed
	<-h.finished
	fmt.Println("terminated:", w.IsPodKnownTerminated(pod.UID))

	cancel()
	fmt.Println("Run:", <-stopped)
	// Output:
	// SyncPod web create
	// SyncTerminatingPod web grace 5
	// SyncTerminatedPod web
	// terminated: true
	// Run: <nil>
}

// ExampleWorkQueue shows the queue the agent's sync ticker drains.
func ExampleWorkQueue() {
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	q := podworkers.NewWorkQueue(clk)
	q.Enqueue("resync", time.Minute)
	q.Enqueue("retry", 10*time.Second)
	fmt.Println(q.GetWork())
	clk.Step(10 * time.Second)
	fmt.Println(q.GetWork())
	// Output:
	// []
	// [retry]
}
