package podworkers

import (
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// closed reports whether ch is closed, without waiting.
func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestPodGoesThroughSyncTerminatingAndTerminated(t *testing.T) {
	hs := newHarness(t, Config{})
	hs.run()
	pod := newPod("a", 1)
	hs.update(SyncPodCreate, pod)
	c := hs.expect(kindSync, "a")
	if c.updateType != SyncPodCreate || c.status == nil || c.status.ID != "a" {
		t.Fatalf("SyncPod got updateType %v, status %+v; want create with the pod's status", c.updateType, c.status)
	}
	if hs.pw.IsPodTerminationRequested("a") {
		t.Errorf("IsPodTerminationRequested() = true while syncing")
	}
	done := make(chan struct{})
	hs.kill(pod, &KillPodOptions{CompletedCh: done, PodTerminationGracePeriodSecondsOverride: ptr(int64(5))})
	if !hs.pw.IsPodTerminationRequested("a") {
		t.Errorf("IsPodTerminationRequested() = false after a kill")
	}
	c.ok()
	term := hs.expect(kindTerminating, "a")
	if term.grace != 5 {
		t.Errorf("SyncTerminatingPod grace = %d, want 5", term.grace)
	}
	if closed(done) || hs.pw.IsPodKnownTerminated("a") {
		t.Fatalf("pod reported terminated before SyncTerminatingPod returned")
	}
	term.ok()
	final := hs.expect(kindTerminated, "a")
	if !closed(done) {
		t.Errorf("CompletedCh still open once terminated")
	}
	if !hs.pw.IsPodKnownTerminated("a") || hs.pw.CouldHaveRunningContainers("a") {
		t.Errorf("IsPodKnownTerminated, CouldHaveRunningContainers = %v, %v; want true, false",
			hs.pw.IsPodKnownTerminated("a"), hs.pw.CouldHaveRunningContainers("a"))
	}
	final.ok()
	hs.waitExit("a")
	late := make(chan struct{})
	hs.kill(pod, &KillPodOptions{CompletedCh: late})
	if !closed(late) {
		t.Errorf("CompletedCh of a kill after the pod finished was not closed at once")
	}
}

func TestTerminalPhaseMovesToTerminating(t *testing.T) {
	hs := newHarness(t, Config{})
	hs.run()
	pod := newPod("a", 1)
	pod.Spec.TerminationGracePeriodSeconds = ptr(int64(12))
	hs.update(SyncPodCreate, pod)
	hs.expect(kindSync, "a").terminalPhase()
	term := hs.expect(kindTerminating, "a")
	if term.grace != 12 {
		t.Errorf("SyncTerminatingPod grace = %d, want the spec's 12", term.grace)
	}
	if !hs.pw.IsPodTerminationRequested("a") {
		t.Errorf("IsPodTerminationRequested() = false after SyncPod reported a terminal phase")
	}
	term.ok()
	hs.expect(kindTerminated, "a").ok()
	hs.waitExit("a")
}

func TestDeletionTerminatesWithTheDeletionGracePeriod(t *testing.T) {
	tests := []struct {
		name string
		// script brings the pod to its first SyncTerminatingPod.
		script func(hs *harness, pod *corev1.Pod)
	}{
		{
			name: "a pod first seen deleted goes straight to terminating",
			script: func(hs *harness, pod *corev1.Pod) {
				hs.update(SyncPodCreate, deleted(pod, 7))
			},
		},
		{
			name: "a deletion during SyncPod cancels it and terminates",
			script: func(hs *harness, pod *corev1.Pod) {
				hs.update(SyncPodCreate, pod)
				c := hs.expect(kindSync, pod.UID)
				hs.update(SyncPodUpdate, deleted(pod, 7))
				if c.ctx.Err() == nil {
					hs.t.Errorf("SyncPod context not cancelled by the deletion")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := newHarness(t, Config{})
			hs.run()
			pod := newPod("a", 1)
			tt.script(hs, pod)
			term := hs.expect(kindTerminating, "a")
			if term.grace != 7 {
				t.Errorf("SyncTerminatingPod grace = %d, want the deletion's 7", term.grace)
			}
			term.ok()
			final := hs.expect(kindTerminated, "a")
			if !hs.pw.shouldPodContentBeRemoved("a") {
				t.Errorf("shouldPodContentBeRemoved() = false for a deleted, terminated pod")
			}
			final.ok()
			hs.waitExit("a")
		})
	}
}

func TestKillDuringSyncIsNeverLost(t *testing.T) {
	hs := newHarness(t, Config{})
	hs.h.ignoreCancel.Store(true)
	hs.run()
	hs.update(SyncPodCreate, newPod("a", 1))
	c := hs.expect(kindSync, "a")
	hs.kill(newPod("a", 1), nil)
	if c.ctx.Err() == nil {
		t.Errorf("SyncPod context not cancelled by the kill")
	}
	// Later non-kill updates replace the pending kill but not termination.
	hs.update(SyncPodUpdate, newPod("a", 2))
	hs.update(SyncPodSync, newPod("a", 3))
	c.ok()
	term := hs.expect(kindTerminating, "a")
	if term.generation() != 3 {
		t.Errorf("SyncTerminatingPod got generation %d, want the newest, 3", term.generation())
	}
	term.ok()
	hs.expect(kindTerminated, "a").ok()
	hs.waitExit("a")
}

func TestUpdatesDuringASyncAreCoalesced(t *testing.T) {
	hs := newHarness(t, Config{})
	hs.run()
	mirror := newPod("mirror", 1)
	hs.pw.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: newPod("a", 1), MirrorPod: mirror})
	c := hs.expect(kindSync, "a")
	for gen := int64(2); gen <= 5; gen++ {
		hs.pw.UpdatePod(UpdatePodOptions{UpdateType: SyncPodUpdate, Pod: newPod("a", gen), MirrorPod: mirror})
	}
	c.ok()
	c = hs.expect(kindSync, "a")
	if c.generation() != 5 || c.updateType != SyncPodUpdate {
		t.Errorf("coalesced SyncPod got generation %d, %v; want 5, update", c.generation(), c.updateType)
	}
	if c.mirror != mirror {
		t.Errorf("coalesced SyncPod lost the mirror pod")
	}
	// An update without a mirror means the mirror is gone.
	hs.update(SyncPodSync, newPod("a", 5))
	c.ok()
	c = hs.expect(kindSync, "a")
	if c.mirror != nil {
		t.Errorf("SyncPod got a mirror pod after an update that had none")
	}
	c.ok()
	// A sentinel update shows that no other sync was queued.
	hs.update(SyncPodSync, newPod("a", 6))
	if c = hs.expect(kindSync, "a"); c.generation() != 6 {
		t.Errorf("SyncPod after the coalesced one got generation %d, want 6", c.generation())
	}
	c.ok()
}

func TestGracePeriodOnlyShrinksWhileTerminating(t *testing.T) {
	hs := newHarness(t, Config{})
	hs.run()
	pod := newPod("a", 1)
	hs.update(SyncPodCreate, pod)
	c := hs.expect(kindSync, "a")
	first := func(*corev1.PodStatus) {}
	hs.kill(pod, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: ptr(int64(20)), PodStatusFunc: first})
	c.ok()
	term := hs.expect(kindTerminating, "a")
	if term.grace != 20 || term.statusFn == nil {
		t.Fatalf("SyncTerminatingPod grace %d, statusFn set %v; want 20, true", term.grace, term.statusFn != nil)
	}

	reason := ""
	hs.kill(pod, &KillPodOptions{
		PodTerminationGracePeriodSecondsOverride: ptr(int64(10)),
		PodStatusFunc:                            func(s *corev1.PodStatus) { s.Reason = "Evicted" },
	})
	if term.ctx.Err() == nil {
		t.Errorf("a shorter grace period did not cancel SyncTerminatingPod")
	}
	term = hs.expect(kindTerminating, "a")
	if term.grace != 10 {
		t.Errorf("SyncTerminatingPod grace = %d after a shorter kill, want 10", term.grace)
	}
	var st corev1.PodStatus
	term.statusFn(&st)
	if reason = st.Reason; reason != "Evicted" {
		t.Errorf("SyncTerminatingPod got an old status function (reason %q)", reason)
	}

	hs.kill(pod, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: ptr(int64(15))})
	if term.ctx.Err() != nil {
		t.Errorf("a longer grace period cancelled SyncTerminatingPod")
	}
	term.fail(errors.New("container still running"))
	term = hs.expect(kindTerminating, "a")
	if term.grace != 10 {
		t.Errorf("retried SyncTerminatingPod grace = %d after a longer kill, want 10", term.grace)
	}

	hs.update(SyncPodUpdate, deleted(pod, 0))
	term = hs.expect(kindTerminating, "a")
	if term.grace != 1 {
		t.Errorf("SyncTerminatingPod grace = %d after a deletion with grace 0, want 1", term.grace)
	}
	term.ok()
	hs.expect(kindTerminated, "a").ok()
	hs.waitExit("a")
}

func TestEffectiveGracePeriod(t *testing.T) {
	withGrace := func(spec *int64, deletion *int64) *corev1.Pod {
		pod := newPod("a", 1)
		pod.Spec.TerminationGracePeriodSeconds = spec
		pod.DeletionGracePeriodSeconds = deletion
		return pod
	}
	tests := []struct {
		name     string
		current  int64
		pod      *corev1.Pod
		override *int64
		want     int64
	}{
		{"the spec's grace period applies", 0, withGrace(ptr(int64(45)), nil), nil, 45},
		{"a pod without a spec grace period gets 30", 0, withGrace(nil, nil), nil, 30},
		{"a runtime-only pod gets 30", 0, nil, nil, 30},
		{"the deletion grace period wins over a shorter spec", 0, withGrace(ptr(int64(30)), ptr(int64(60))), nil, 60},
		{"the deletion grace period wins over a longer spec", 0, withGrace(ptr(int64(30)), ptr(int64(5))), nil, 5},
		{"a shorter override applies", 0, withGrace(ptr(int64(30)), nil), ptr(int64(10)), 10},
		{"a longer override is ignored", 0, withGrace(ptr(int64(30)), nil), ptr(int64(90)), 30},
		{"an override shortens the deletion grace period", 0, withGrace(nil, ptr(int64(20))), ptr(int64(2)), 2},
		{"a zero spec grace period becomes 1", 0, withGrace(ptr(int64(0)), nil), nil, 1},
		{"a zero deletion grace period becomes 1", 0, withGrace(ptr(int64(30)), ptr(int64(0))), nil, 1},
		{"a negative override becomes 1", 0, withGrace(ptr(int64(30)), nil), ptr(int64(-5)), 1},
		{"a later, longer value keeps the current one", 8, withGrace(ptr(int64(30)), nil), nil, 8},
		{"a later, longer deletion keeps the current one", 8, withGrace(nil, ptr(int64(20))), nil, 8},
		{"a later, shorter value replaces the current one", 8, withGrace(ptr(int64(30)), nil), ptr(int64(3)), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := effectiveGracePeriod(tt.current, tt.pod, tt.override); got != tt.want {
				t.Errorf("effectiveGracePeriod() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestRuntimeOnlyPods(t *testing.T) {
	t.Run("an orphan goes through SyncTerminatingRuntimePod and is forgotten", func(t *testing.T) {
		hs := newHarness(t, Config{})
		hs.run()
		rp := &noderuntime.Pod{ID: "orphan", Name: "old", Namespace: "ns"}
		done := make(chan struct{})
		hs.pw.UpdatePod(UpdatePodOptions{UpdateType: SyncPodSync, RunningPod: rp, KillPodOptions: &KillPodOptions{CompletedCh: done}})
		c := hs.expect(kindRuntime, "orphan")
		if c.runningPod != rp {
			t.Errorf("SyncTerminatingRuntimePod got %+v, want the running pod", c.runningPod)
		}
		if !hs.pw.IsPodTerminationRequested("orphan") || !hs.pw.CouldHaveRunningContainers("orphan") {
			t.Errorf("a runtime-only pod being stopped is not reported terminating")
		}
		c.ok()
		hs.waitExit("orphan")
		if !closed(done) {
			t.Errorf("CompletedCh still open once the runtime-only pod stopped")
		}
		if hs.pw.IsPodTerminationRequested("orphan") {
			t.Errorf("a stopped runtime-only pod is still known")
		}
		if got := hs.cache.calls(); len(got) != 0 {
			t.Errorf("a runtime-only pod waited for statuses %v, want none", got)
		}
	})
	t.Run("a runtime-only kill of a known pod uses its spec", func(t *testing.T) {
		hs := newHarness(t, Config{})
		hs.run()
		pod := newPod("a", 1)
		hs.update(SyncPodCreate, pod)
		c := hs.expect(kindSync, "a")
		hs.pw.UpdatePod(UpdatePodOptions{UpdateType: SyncPodKill, RunningPod: &noderuntime.Pod{ID: "a"}})
		c.ok()
		term := hs.expect(kindTerminating, "a")
		if term.pod != pod {
			t.Errorf("SyncTerminatingPod did not get the known spec")
		}
		term.ok()
		hs.expect(kindTerminated, "a").ok()
		hs.waitExit("a")
	})
}

func TestRequeueAfterSync(t *testing.T) {
	cfg := Config{ResyncInterval: 100 * time.Second, BackOffPeriod: 20 * time.Second, TransientRetry: 2 * time.Second}
	tests := []struct {
		name    string
		outcome func(c *call)
		due     time.Duration
	}{
		{"a successful sync is due again after the resync interval", (*call).ok, cfg.ResyncInterval},
		{"a failed sync is due again after the back-off period", func(c *call) { c.fail(errors.New("boom")) }, cfg.BackOffPeriod},
		{"a transient failure is due again soon", func(c *call) { c.fail(fmt.Errorf("network not ready: %w", ErrTransient)) }, cfg.TransientRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := newHarness(t, cfg)
			hs.run()
			hs.update(SyncPodCreate, newPod("a", 1))
			tt.outcome(hs.expect(kindSync, "a"))
			// The next sync (in the same state) starts only after the last
			// one was recorded; holding it keeps the queue as it left it.
			hs.update(SyncPodSync, newPod("a", 2))
			next := hs.expect(kindSync, "a")
			if hs.due("a", tt.due-time.Nanosecond) {
				t.Errorf("pod due before %v", tt.due)
			}
			if !hs.due("a", tt.due/2+time.Nanosecond) {
				t.Errorf("pod not due after %v (with 50%% jitter)", tt.due*3/2)
			}
			next.ok()
		})
	}
}

func TestEachSyncSeesAStatusNewerThanTheLastSync(t *testing.T) {
	hs := newHarness(t, Config{})
	hs.run()
	release := hs.cache.holdNext()
	hs.update(SyncPodCreate, newPod("a", 1))
	select {
	case <-hs.cache.waiting:
	case <-time.After(failsafe):
		t.Fatal("worker did not ask for a status")
	}
	release()
	c := hs.expect(kindSync, "a")
	hs.clk.Step(5 * time.Second)
	c.ok()
	hs.update(SyncPodSync, newPod("a", 2))
	c = hs.expect(kindSync, "a")
	got := hs.cache.calls()
	if len(got) != 2 || !got[0].minTime.IsZero() || !got[1].minTime.Equal(t0.Add(5*time.Second)) {
		t.Errorf("GetNewerThan calls = %v, want zero time then the end of the first sync", got)
	}
	if !c.status.TimeStamp.After(got[1].minTime) {
		t.Errorf("SyncPod got status of %v, not newer than %v", c.status.TimeStamp, got[1].minTime)
	}
	c.ok()
}

func TestAPanickingSyncIsRetriedAndDoesNotStopOtherPods(t *testing.T) {
	hs := newHarness(t, Config{})
	hs.run()
	hs.update(SyncPodCreate, newPod("bad", 1))
	hs.expect(kindSync, "bad").panics("nil map write in a handler")
	hs.update(SyncPodCreate, newPod("good", 1))
	hs.expect(kindSync, "good").ok()
	// The next sync of the bad pod starts only once the panic was recorded
	// as an error: it is then due after the error backoff, not the resync.
	hs.update(SyncPodSync, newPod("bad", 2))
	next := hs.expect(kindSync, "bad")
	if !hs.due("bad", DefaultBackOffPeriod*3/2+time.Nanosecond) {
		t.Fatal("the panicking pod was not queued for a retry after the error backoff")
	}
	next.ok()
}
