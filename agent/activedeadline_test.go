package agent

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/sources"
)

func withDeadline(pod *corev1.Pod, seconds int64) *corev1.Pod {
	pod.Spec.ActiveDeadlineSeconds = &seconds
	return pod
}

func TestActiveDeadlineCountsFromTheRecordedStartTime(t *testing.T) {
	t.Parallel()
	clk := testingclock.NewFakeClock(t0)
	store := NewMemoryStatuses()
	d := activeDeadline{statuses: store, clk: clk}
	started := metav1.NewTime(t0)

	noDeadline := testPod(corev1.RestartPolicyAlways, "a")
	noDeadline.Status.StartTime = &started
	unstarted := withDeadline(testPod(corev1.RestartPolicyAlways, "a"), 5)
	fromSpec := withDeadline(testPod(corev1.RestartPolicyAlways, "a"), 5)
	fromSpec.UID = "uid-spec"
	fromSpec.Status.StartTime = &started
	fromStore := withDeadline(testPod(corev1.RestartPolicyAlways, "a"), 5)
	fromStore.UID = "uid-store"
	later := metav1.NewTime(t0.Add(10 * time.Second))
	fromStore.Status.StartTime = &started // stale: the store's is newer
	store.SetPodStatus(fromStore, &corev1.PodStatus{StartTime: &later})

	clk.Step(5*time.Second - time.Nanosecond)
	if d.pastDeadline(fromSpec) {
		t.Fatal("past the deadline a nanosecond before it")
	}
	clk.Step(time.Nanosecond)
	if !d.pastDeadline(fromSpec) {
		t.Fatal("not past the deadline when it is reached")
	}
	if d.pastDeadline(noDeadline) || d.pastDeadline(unstarted) {
		t.Fatal("a pod without a deadline or a start time is past a deadline")
	}
	if d.pastDeadline(fromStore) {
		t.Fatal("the deadline counted from the pod's stale start time, not the recorded one")
	}
	clk.Step(10 * time.Second)
	reason, message, evict := d.shouldEvict(fromStore)
	if !evict || reason != "DeadlineExceeded" || message != "Pod was active on the node longer than the specified deadline" {
		t.Fatalf("shouldEvict = %q, %q, %v", reason, message, evict)
	}
}

func TestSyncPodPastItsDeadlineFailsAndIsTerminal(t *testing.T) {
	pod := withDeadline(testPod(corev1.RestartPolicyAlways, "a"), 30)
	status := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: readySandbox(), ContainerStatuses: []*noderuntime.ContainerStatus{running("a", 0)}}
	rt := &scriptedRuntime{result: &noderuntime.SyncResult{}, after: status}
	s, st, _ := newTestSyncer(t, rt)
	clk := s.clk.(*testingclock.FakeClock)
	if terminal, err := s.SyncPod(t.Context(), podworkers.SyncPodCreate, pod, nil, status); terminal || err != nil {
		t.Fatalf("first SyncPod = %v, %v; want a running pod", terminal, err)
	}
	clk.Step(30 * time.Second)
	if terminal, err := s.SyncPod(t.Context(), podworkers.SyncPodSync, pod, nil, status); !terminal || err != nil {
		t.Fatalf("SyncPod past the deadline = %v, %v; want terminal", terminal, err)
	}
	got, _ := st.GetPodStatus(pod.UID)
	if got.Phase != corev1.PodFailed || got.Reason != reasonDeadlineExceeded || got.Message != messageDeadlineExceeded {
		t.Fatalf("status = %s %q %q, want Failed DeadlineExceeded", got.Phase, got.Reason, got.Message)
	}
	// The worker then kills it; the final status keeps the reason.
	stopped := &noderuntime.PodStatus{ID: pod.UID, ContainerStatuses: []*noderuntime.ContainerStatus{exited("a", 137, 0)}}
	rt.after = stopped
	if err := s.SyncTerminatingPod(t.Context(), pod, status, nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(rt.killed) != 1 {
		t.Fatalf("KillPod calls = %d, want 1", len(rt.killed))
	}
	got, _ = st.GetPodStatus(pod.UID)
	if got.Phase != corev1.PodFailed || got.Reason != reasonDeadlineExceeded {
		t.Fatalf("final status = %s %q, want Failed DeadlineExceeded", got.Phase, got.Reason)
	}
}

func TestSucceededPodKeepsItsPhasePastTheDeadline(t *testing.T) {
	pod := withDeadline(testPod(corev1.RestartPolicyNever, "a"), 5)
	done := &noderuntime.PodStatus{ID: pod.UID, ContainerStatuses: []*noderuntime.ContainerStatus{exited("a", 0, 0)}}
	s, st, _ := newTestSyncer(t, &scriptedRuntime{after: done})
	if terminal, _ := s.SyncPod(t.Context(), podworkers.SyncPodSync, pod, nil, done); !terminal {
		t.Fatal("a completed pod is not terminal")
	}
	s.clk.(*testingclock.FakeClock).Step(time.Minute)
	if err := s.SyncTerminatedPod(t.Context(), pod, done); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetPodStatus(pod.UID); got.Phase != corev1.PodSucceeded || got.Reason != "" {
		t.Fatalf("status = %s %q, want Succeeded", got.Phase, got.Reason)
	}
}

func TestSyncTickSyncsPodsPastTheirDeadline(t *testing.T) {
	lt := newLoopTest(t, Config{})
	lt.start()
	pod := withDeadline(staticPod("a", "a"), 5)
	started := metav1.NewTime(t0)
	lt.agent.statuses.SetPodStatus(pod, &corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started})
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{pod, staticPod("b", "b")}}
	lt.nextCall()
	lt.nextCall()
	lt.clk.Step(time.Second) // not yet past: nothing is due
	lt.noCall()
	lt.clk.Step(4 * time.Second)
	if c := lt.nextCall(); c.UpdateType != podworkers.SyncPodSync || c.Pod.UID != "a" {
		t.Fatalf("call = %s %v, want sync of a", c.UpdateType, c.Pod)
	}
}
