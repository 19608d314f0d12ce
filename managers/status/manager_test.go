package status

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// version returns the cached version of the pod's status, 0 if none.
func version(m *StatusManager, pod *corev1.Pod) uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if c, ok := m.statuses[pod.UID]; ok {
		return c.version
	}
	return 0
}

// drained reports whether a sync signal was pending, and clears it.
func drained(m *StatusManager) bool {
	select {
	case <-m.signal:
		return true
	default:
		return false
	}
}

func TestSetPodStatusVersions(t *testing.T) {
	later := metav1.NewTime(epoch.Add(time.Hour))
	tests := []struct {
		name        string
		second      func() *corev1.PodStatus
		wantVersion uint64
	}{
		{
			name:        "an equal status is a no-op",
			second:      running,
			wantVersion: 1,
		},
		{
			name: "a condition time that moved while its status held is a no-op",
			second: func() *corev1.PodStatus {
				s := running()
				s.Conditions[0].LastTransitionTime = later
				return s
			},
			wantVersion: 1,
		},
		{
			name: "a sub-second difference in a container's start is a no-op",
			second: func() *corev1.PodStatus {
				s := running()
				s.ContainerStatuses[0].State.Running.StartedAt.Time = s.ContainerStatuses[0].State.Running.StartedAt.Add(300 * time.Millisecond)
				return s
			},
			wantVersion: 1,
		},
		{
			name: "a changed status gets the next version",
			second: func() *corev1.PodStatus {
				s := running()
				s.Conditions[0].Status = corev1.ConditionFalse
				return s
			},
			wantVersion: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(nil, nil, nil, clocktesting.NewFakeClock(epoch), logr.Discard(), Config{})
			pod := apiPod("p", "uid-1")
			m.SetPodStatus(pod, running())
			if !drained(m) {
				t.Fatal("the first status did not signal the sync loop")
			}
			m.SetPodStatus(pod, tt.second())
			if got := version(m, pod); got != tt.wantVersion {
				t.Fatalf("version = %d, want %d", got, tt.wantVersion)
			}
			if signalled := drained(m); signalled != (tt.wantVersion > 1) {
				t.Fatalf("signalled = %v, want %v", signalled, tt.wantVersion > 1)
			}
		})
	}
}

func TestSetPodStatusNeverLeavesATerminalPhase(t *testing.T) {
	m := New(nil, nil, nil, clocktesting.NewFakeClock(epoch), logr.Discard(), Config{})
	pod := apiPod("p", "uid-1")
	m.SetPodStatus(pod, withPhase(running(), corev1.PodSucceeded))
	m.SetPodStatus(pod, running())
	got, _ := m.GetPodStatus(pod.UID)
	if got.Phase != corev1.PodSucceeded {
		t.Fatalf("phase = %s, want Succeeded kept", got.Phase)
	}
}

func TestSetPodStatusStartsFromTheAPIStatus(t *testing.T) {
	m := New(nil, nil, nil, clocktesting.NewFakeClock(epoch), logr.Discard(), Config{})
	pod := apiPod("p", "uid-1")
	pod.Status.Phase = corev1.PodFailed
	m.SetPodStatus(pod, running())
	got, _ := m.GetPodStatus(pod.UID)
	if got.Phase != corev1.PodFailed {
		t.Fatalf("phase = %s, want the API's terminal Failed kept", got.Phase)
	}
}

func TestSetPodStatusKeepsItsOwnCopy(t *testing.T) {
	m := New(nil, nil, nil, clocktesting.NewFakeClock(epoch), logr.Discard(), Config{})
	pod := apiPod("p", "uid-1")
	s := running()
	m.SetPodStatus(pod, s)
	s.Phase = corev1.PodUnknown
	if got, _ := m.GetPodStatus(pod.UID); got.Phase != corev1.PodRunning {
		t.Fatalf("cached phase = %s after the caller changed its status, want Running", got.Phase)
	}
}

func TestSetPodStatusNeverBlocks(t *testing.T) {
	// Nobody runs the sync loop: thousands of changes must still return.
	m := New(nil, nil, nil, clocktesting.NewFakeClock(epoch), logr.Discard(), Config{})
	pod := apiPod("p", "uid-1")
	for i := range 5000 {
		s := running()
		s.Message = string(rune('a' + i%26))
		m.SetPodStatus(pod, s)
	}
	if got := version(m, pod); got < 26 {
		t.Fatalf("version = %d after 5000 changes", got)
	}
}

func TestStandaloneModeIsAMemoryStore(t *testing.T) {
	m := New(nil, nil, nil, clocktesting.NewFakeClock(epoch), logr.Discard(), Config{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()

	pod := apiPod("p", "uid-1")
	if _, ok := m.GetPodStatus(pod.UID); ok {
		t.Fatal("GetPodStatus found a status never set")
	}
	m.SetPodStatus(pod, running())
	if got, ok := m.GetPodStatus(pod.UID); !ok || got.Phase != corev1.PodRunning {
		t.Fatalf("GetPodStatus = %v, %v; want Running", got, ok)
	}
	m.RemovePodStatus(pod.UID)
	m.RemovePodStatus(pod.UID)
	if _, ok := m.GetPodStatus(pod.UID); ok {
		t.Fatal("GetPodStatus found a removed status")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Run did not return")
	}
}

func TestSetPodStatusIgnoresNil(t *testing.T) {
	m := New(nil, nil, nil, clocktesting.NewFakeClock(epoch), logr.Discard(), Config{})
	m.SetPodStatus(nil, running())
	m.SetPodStatus(apiPod("p", "uid-1"), nil)
	if len(m.statuses) != 0 {
		t.Fatalf("cached %d statuses from nil arguments", len(m.statuses))
	}
}
