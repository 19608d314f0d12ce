package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/internal/simharness"
	"github.com/nodekit/nodekit/sources"
)

// running is a pipeline on the real clock with a zero-latency simulated
// runtime: what it measures is the agent's own cost.
type running struct {
	*simharness.Pipeline
	stop func()
}

func startPipeline(b *testing.B, maxPods int) *running {
	b.Helper()
	opts := simharness.Complete(b, simharness.Options{})
	opts.Agent.MaxPods = maxPods
	p := simharness.Build(clock.RealClock{}, logr.Discard(), opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Agent.Run(ctx) }()
	var once sync.Once
	r := &running{Pipeline: p, stop: func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				b.Errorf("agent: %v", err)
			}
		})
	}}
	b.Cleanup(r.stop)
	return r
}

// benchPod is a one-container static pod.
func benchPod(i int) *corev1.Pod {
	uid := types.UID(fmt.Sprintf("bench-%06d", i))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%06d", i), Namespace: "bench", UID: uid,
			Annotations: map[string]string{sources.AnnotationSource: sources.FileSource}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyAlways,
			Containers: []corev1.Container{{Name: "c", Image: "sim/busybox:1",
				ImagePullPolicy: corev1.PullIfNotPresent}},
		},
	}
}

// isRunning reports whether the agent shows the pod Running.
func (r *running) isRunning(uid types.UID) bool {
	st, ok := r.Statuses.GetPodStatus(uid)
	return ok && st.Phase == corev1.PodRunning
}

// waitRunning spins until every pod runs, or fails after limit.
func (r *running) waitRunning(b *testing.B, uids []types.UID, limit time.Duration) {
	b.Helper()
	deadline := time.Now().Add(limit)
	next := 0
	for next < len(uids) {
		if r.isRunning(uids[next]) {
			next++
			continue
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d pods running after %s", next, len(uids), limit)
		}
		runtime.Gosched()
	}
}
