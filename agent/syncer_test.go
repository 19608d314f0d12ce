package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// scriptedRuntime returns a scripted SyncResult and, after a sync, the
// status "after".
type scriptedRuntime struct {
	fakeRuntime
	result *noderuntime.SyncResult
	after  *noderuntime.PodStatus
	killed []*int64
}

func (r *scriptedRuntime) SyncPod(context.Context, *corev1.Pod, *noderuntime.PodStatus) *noderuntime.SyncResult {
	return r.result
}
func (r *scriptedRuntime) GetPodStatus(_ context.Context, uid types.UID, _, _ string) (*noderuntime.PodStatus, error) {
	if r.after == nil {
		return &noderuntime.PodStatus{ID: uid}, nil
	}
	return r.after, nil
}
func (r *scriptedRuntime) KillPod(_ context.Context, _ *corev1.Pod, _ *noderuntime.Pod, grace *int64) error {
	r.killed = append(r.killed, grace)
	return nil
}

type recordingQueue struct {
	mu     sync.Mutex
	delays map[types.UID]time.Duration
}

func (q *recordingQueue) Enqueue(uid types.UID, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.delays[uid] = d
}

func newTestSyncer(t *testing.T, rt noderuntime.Runtime) (*Syncer, *MemoryStatuses, *recordingQueue) {
	st, q := NewMemoryStatuses(), &recordingQueue{delays: map[types.UID]time.Duration{}}
	return NewSyncer(rt, st, q, testingclock.NewFakeClock(t0), testr.New(t), Config{NodeName: "n", NodeIP: "127.0.0.1"}), st, q
}

func TestSyncPodShowsStartedContainersWithoutWaitingForARelist(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, "a")
	rt := &scriptedRuntime{
		result: &noderuntime.SyncResult{Steps: []noderuntime.StepResult{{Action: noderuntime.StartContainer, Target: "a"}}},
		after:  &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: readySandbox(), ContainerStatuses: []*noderuntime.ContainerStatus{running("a", 0)}},
	}
	s, st, _ := newTestSyncer(t, rt)
	terminal, err := s.SyncPod(t.Context(), podworkers.SyncPodCreate, pod, nil, &noderuntime.PodStatus{ID: pod.UID})
	if terminal || err != nil {
		t.Fatalf("SyncPod = %v, %v", terminal, err)
	}
	got, _ := st.GetPodStatus(pod.UID)
	if got.Phase != corev1.PodRunning || !got.ContainerStatuses[0].Ready {
		t.Fatalf("status after sync = %s ready=%v, want Running and ready", got.Phase, got.ContainerStatuses[0].Ready)
	}
}

func TestSyncPodInBackOffIsRequeuedAtTheBackOffEnd(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, "a")
	backoff := fmt.Errorf("back-off 40s restarting failed container: %w", noderuntime.ErrCrashLoopBackOff)
	rt := &scriptedRuntime{result: &noderuntime.SyncResult{Steps: []noderuntime.StepResult{
		{Action: noderuntime.StartContainer, Target: "a", Err: backoff, Message: "back-off 40s", RetryAfter: 25 * time.Second}}}}
	s, st, q := newTestSyncer(t, rt)
	status := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: readySandbox(), ContainerStatuses: []*noderuntime.ContainerStatus{exited("a", 1, 2)}}
	if _, err := s.SyncPod(t.Context(), podworkers.SyncPodSync, pod, nil, status); err != nil {
		t.Fatalf("a container in backoff must not be a sync error: %v", err)
	}
	if d := q.delays[pod.UID]; d != 25*time.Second {
		t.Fatalf("requeued after %v, want the 25s left of the backoff", d)
	}
	// The next status shows the reason recorded by this sync.
	if _, err := s.SyncPod(t.Context(), podworkers.SyncPodSync, pod, nil, status); err != nil {
		t.Fatal(err)
	}
	got, _ := st.GetPodStatus(pod.UID)
	if w := got.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "CrashLoopBackOff" {
		t.Fatalf("state = %+v, want waiting CrashLoopBackOff", got.ContainerStatuses[0].State)
	}
}

func TestSyncPodReturnsRealErrors(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, "a")
	rt := &scriptedRuntime{result: &noderuntime.SyncResult{Steps: []noderuntime.StepResult{
		{Action: noderuntime.StartContainer, Target: "a", Err: fmt.Errorf("no such image: %w", noderuntime.ErrImagePull)}}}}
	s, _, _ := newTestSyncer(t, rt)
	_, err := s.SyncPod(t.Context(), podworkers.SyncPodSync, pod, nil, &noderuntime.PodStatus{ID: pod.UID})
	if !errors.Is(err, noderuntime.ErrImagePull) {
		t.Fatalf("err = %v, want ErrImagePull", err)
	}
}

func TestFinishedPodIsTerminalAndTerminationRecordsFinalStatus(t *testing.T) {
	pod := testPod(corev1.RestartPolicyNever, "a")
	done := &noderuntime.PodStatus{ID: pod.UID, ContainerStatuses: []*noderuntime.ContainerStatus{exited("a", 3, 0)}}
	rt := &scriptedRuntime{after: done}
	s, st, _ := newTestSyncer(t, rt)
	terminal, err := s.SyncPod(t.Context(), podworkers.SyncPodSync, pod, nil, done)
	if !terminal || err != nil {
		t.Fatalf("SyncPod = %v, %v; want terminal", terminal, err)
	}
	grace := int64(5)
	if err := s.SyncTerminatingPod(t.Context(), pod, done, &grace, nil); err != nil {
		t.Fatal(err)
	}
	if len(rt.killed) != 1 || *rt.killed[0] != 5 {
		t.Fatalf("KillPod grace = %v, want 5", rt.killed)
	}
	got, _ := st.GetPodStatus(pod.UID)
	if got.Phase != corev1.PodFailed || got.ContainerStatuses[0].State.Terminated.ExitCode != 3 {
		t.Fatalf("final status = %s %+v", got.Phase, got.ContainerStatuses[0].State)
	}
}

func TestPodStartDurationIsObservedOncePerPod(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, "a")
	pod.Annotations = map[string]string{"kubernetes.io/config.seen": t0.Add(-3 * time.Second).Format(time.RFC3339Nano)}
	run := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: readySandbox(), ContainerStatuses: []*noderuntime.ContainerStatus{running("a", 0)}}
	rt := &scriptedRuntime{result: &noderuntime.SyncResult{}, after: run}
	reg := prometheus.NewRegistry()
	s := NewSyncer(rt, NewMemoryStatuses(), nil, testingclock.NewFakeClock(t0), testr.New(t), Config{NodeName: "n"}, WithMetrics(reg))
	for i := 0; i < 3; i++ {
		if _, err := s.SyncPod(t.Context(), podworkers.SyncPodSync, pod, nil, run); err != nil {
			t.Fatal(err)
		}
	}
	var m dto.Metric
	if err := s.startDuration.(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	if n, sum := m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum(); n != 1 || sum != 3 {
		t.Fatalf("pod start duration: %d samples summing %vs, want 1 of 3s", n, sum)
	}
}
