package podworkers

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestSyncKnownPods(t *testing.T) {
	hs := newHarness(t, Config{})
	hs.run()
	gone, kept, running := newPod("gone", 1), newPod("kept", 1), newPod("running", 1)
	for _, pod := range []*corev1.Pod{gone, kept} {
		hs.update(SyncPodCreate, pod)
		hs.finish(hs.expect(kindSync, pod.UID), pod)
	}
	hs.update(SyncPodCreate, running)
	hs.expect(kindSync, "running").ok()

	known := hs.pw.SyncKnownPods([]*corev1.Pod{kept})
	want := map[types.UID]PodWorkerSync{
		"kept":    {State: TerminatedPod, HasConfig: true},
		"running": {State: TerminatingPod, Orphan: true, HasConfig: true},
	}
	if !equalSyncs(known, want) {
		t.Errorf("SyncKnownPods() = %v, want %v", known, want)
	}
	if hs.pw.IsPodKnownTerminated("gone") || hs.pw.CouldHaveRunningContainers("gone") || !hs.pw.shouldPodContentBeRemoved("gone") {
		t.Errorf("a forgotten pod is not reported as gone")
	}
	if !hs.pw.IsPodKnownTerminated("kept") {
		t.Errorf("a desired finished pod was forgotten")
	}

	// The orphan still running is terminated by its worker.
	term := hs.expect(kindTerminating, "running")
	if term.grace != 30 {
		t.Errorf("orphan SyncTerminatingPod grace = %d, want the spec's 30", term.grace)
	}
	term.fail(errors.New("still stopping"))
	// Housekeeping retries a failed orphan without any update.
	if known = hs.pw.SyncKnownPods([]*corev1.Pod{kept}); known["running"].State != TerminatingPod {
		t.Errorf("SyncKnownPods() = %v, want the orphan terminating", known)
	}
	hs.expect(kindTerminating, "running").ok()
	hs.expect(kindTerminated, "running").ok()
	hs.waitExit("running")
	if !hs.pw.shouldPodContentBeRemoved("running") {
		t.Errorf("shouldPodContentBeRemoved() = false for a terminated orphan")
	}
	known = hs.pw.SyncKnownPods([]*corev1.Pod{kept})
	want = map[types.UID]PodWorkerSync{"kept": {State: TerminatedPod, HasConfig: true}}
	if !equalSyncs(known, want) {
		t.Errorf("SyncKnownPods() = %v, want %v", known, want)
	}
}

func TestSyncKnownPodsForgetsAnOrphanThatNeverStarted(t *testing.T) {
	hs := newHarness(t, Config{})
	hs.update(SyncPodCreate, newPod("early", 1))
	if known := hs.pw.SyncKnownPods(nil); len(known) != 0 {
		t.Errorf("SyncKnownPods(nil) = %v, want nothing", known)
	}
	hs.run()
	hs.waitExit("early")
	hs.update(SyncPodCreate, newPod("b", 1))
	hs.expect(kindSync, "b").ok()
}

func TestSyncKnownPodsReportsStaticPods(t *testing.T) {
	hs := newHarness(t, Config{})
	static := newPod("static", 1)
	static.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	api := newPod("api", 1)
	api.Annotations = map[string]string{"kubernetes.io/config.source": "api"}
	hs.update(SyncPodCreate, static)
	hs.update(SyncPodCreate, api)
	known := hs.pw.SyncKnownPods([]*corev1.Pod{static, api})
	want := map[types.UID]PodWorkerSync{
		"static": {State: SyncPod, HasConfig: true, Static: true},
		"api":    {State: SyncPod, HasConfig: true},
	}
	if !equalSyncs(known, want) {
		t.Errorf("SyncKnownPods() = %v, want %v", known, want)
	}
}

func equalSyncs(a, b map[types.UID]PodWorkerSync) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestSameUIDAfterTermination(t *testing.T) {
	tests := []struct {
		name string
		// late is sent once the pod has finished; desired is what
		// SyncKnownPods is then given.
		late       UpdateType
		desired    bool
		wantForget bool
	}{
		{"a create after the pod finished is a restart request", SyncPodCreate, true, true},
		{"a resync after the pod finished is ignored", SyncPodSync, true, false},
		{"an update after the pod finished is ignored", SyncPodUpdate, true, false},
		{"a finished pod no longer desired is forgotten", SyncPodSync, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := newHarness(t, Config{})
			hs.run()
			pod := newPod("a", 1)
			hs.update(SyncPodCreate, pod)
			hs.finish(hs.expect(kindSync, "a"), pod)
			hs.update(tt.late, newPod("a", 2))
			var desired []*corev1.Pod
			if tt.desired {
				desired = append(desired, pod)
			}
			_, kept := hs.pw.SyncKnownPods(desired)["a"]
			if kept == tt.wantForget {
				t.Fatalf("SyncKnownPods() kept the pod = %v, want %v", kept, !tt.wantForget)
			}
			if !tt.wantForget {
				return
			}
			hs.update(SyncPodCreate, newPod("a", 3))
			c := hs.expect(kindSync, "a")
			if c.generation() != 3 || c.updateType != SyncPodCreate {
				t.Errorf("restarted pod synced generation %d, %v; want 3, create", c.generation(), c.updateType)
			}
			if hs.pw.IsPodTerminationRequested("a") {
				t.Errorf("restarted pod still reported terminating")
			}
			c.ok()
		})
	}
}

func TestRestartRequestedWhileTerminatingWaitsForTheEnd(t *testing.T) {
	hs := newHarness(t, Config{})
	hs.run()
	pod := newPod("a", 1)
	hs.update(SyncPodCreate, pod)
	c := hs.expect(kindSync, "a")
	hs.kill(pod, nil)
	c.ok()
	term := hs.expect(kindTerminating, "a")
	hs.update(SyncPodCreate, newPod("a", 2))
	if _, kept := hs.pw.SyncKnownPods([]*corev1.Pod{pod})["a"]; !kept {
		t.Fatalf("SyncKnownPods() forgot a pod still terminating")
	}
	term.ok()
	hs.expect(kindTerminated, "a").ok()
	hs.waitExit("a")
	if _, kept := hs.pw.SyncKnownPods([]*corev1.Pod{pod})["a"]; kept {
		t.Fatalf("SyncKnownPods() kept a finished pod with a restart request")
	}
	hs.update(SyncPodCreate, newPod("a", 3))
	hs.expect(kindSync, "a").ok()
}

func TestPredicates(t *testing.T) {
	type want struct{ knownTerminated, couldRun, terminationRequested, contentRemoved bool }
	pod := newPod("a", 1)
	// toTerminated syncs the pod, then kills it with kill and killed.
	toTerminated := func(hs *harness, kill *KillPodOptions, killed *corev1.Pod) {
		hs.update(SyncPodCreate, pod)
		c := hs.expect(kindSync, "a")
		hs.kill(killed, kill)
		c.ok()
		hs.expect(kindTerminating, "a").ok()
		hs.expect(kindTerminated, "a") // held until the test ends
	}
	tests := []struct {
		name  string
		setup func(hs *harness)
		want  want
	}{
		{"an unknown pod may run until SyncKnownPods has run", func(*harness) {}, want{false, true, false, false}},
		{"an unknown pod has nothing once SyncKnownPods has run", func(hs *harness) { hs.pw.SyncKnownPods(nil) }, want{false, false, false, true}},
		{"a syncing pod may run", func(hs *harness) {
			hs.update(SyncPodCreate, pod)
			hs.expect(kindSync, "a")
		}, want{false, true, false, false}},
		{"a terminating pod may still run", func(hs *harness) {
			hs.update(SyncPodCreate, pod)
			c := hs.expect(kindSync, "a")
			hs.kill(pod, &KillPodOptions{Evict: true})
			c.ok()
			hs.expect(kindTerminating, "a")
		}, want{false, true, true, false}},
		{"a killed pod keeps its content once terminated", func(hs *harness) { toTerminated(hs, nil, pod) }, want{true, false, true, false}},
		{"an evicted pod loses its content once terminated", func(hs *harness) { toTerminated(hs, &KillPodOptions{Evict: true}, pod) }, want{true, false, true, true}},
		{"a deleted pod loses its content once terminated", func(hs *harness) { toTerminated(hs, nil, deleted(pod, 30)) }, want{true, false, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := newHarness(t, Config{})
			hs.run()
			tt.setup(hs)
			got := want{
				hs.pw.IsPodKnownTerminated("a"), hs.pw.CouldHaveRunningContainers("a"),
				hs.pw.IsPodTerminationRequested("a"), hs.pw.shouldPodContentBeRemoved("a"),
			}
			if got != tt.want {
				t.Errorf("knownTerminated, couldRun, terminationRequested, contentRemoved = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestUpdateBeforeRunSyncsOnceRunRuns(t *testing.T) {
	hs := newHarness(t, Config{})
	hs.update(SyncPodCreate, newPod("a", 1))
	hs.update(SyncPodUpdate, newPod("a", 2))
	hs.run()
	c := hs.expect(kindSync, "a")
	if c.generation() != 2 || c.updateType != SyncPodCreate {
		t.Errorf("first SyncPod got generation %d, %v; want 2, create", c.generation(), c.updateType)
	}
	c.ok()
}

func TestRunStops(t *testing.T) {
	tests := []struct {
		name string
		// hold brings a pod to a blocked point and returns the context
		// that must end with Run's.
		hold func(hs *harness) context.Context
	}{
		{"Run cancels a sync in progress", func(hs *harness) context.Context {
			hs.update(SyncPodCreate, newPod("a", 1))
			return hs.expect(kindSync, "a").ctx
		}},
		{"Run stops a worker waiting for a status", func(hs *harness) context.Context {
			hs.cache.holdNext()
			hs.update(SyncPodCreate, newPod("a", 1))
			<-hs.cache.waiting
			return nil
		}},
		{"Run stops idle workers", func(hs *harness) context.Context {
			hs.update(SyncPodCreate, newPod("a", 1))
			c := hs.expect(kindSync, "a")
			c.ok()
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := newHarness(t, Config{})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- hs.pw.Run(ctx) }()
			syncCtx := tt.hold(hs)
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run() = %v, want nil", err)
				}
			case <-time.After(failsafe):
				t.Fatal("Run did not return after its context ended")
			}
			if syncCtx != nil && syncCtx.Err() == nil {
				t.Errorf("sync context still live after Run returned")
			}
			// Updates after Run are recorded but start nothing (goleak).
			hs.update(SyncPodCreate, newPod("b", 1))
			if !hs.pw.CouldHaveRunningContainers("b") {
				t.Errorf("update after Run was not recorded")
			}
			if err := hs.pw.Run(context.Background()); !errors.Is(err, ErrAlreadyRun) {
				t.Errorf("second Run() = %v, want ErrAlreadyRun", err)
			}
		})
	}
}

func TestUpdateWithoutPodIsIgnored(t *testing.T) {
	hs := newHarness(t, Config{})
	hs.pw.UpdatePod(UpdatePodOptions{UpdateType: SyncPodKill})
	if known := hs.pw.SyncKnownPods(nil); len(known) != 0 {
		t.Errorf("SyncKnownPods() = %v after an update without pod, want nothing", known)
	}
}
