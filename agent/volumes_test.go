package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/managers/volumes"
	"github.com/nodekit/nodekit/managers/volumes/volumestest"
	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// fakeVolumes is a volumes.Manager that records calls and fails SetUpPod
// with err.
type fakeVolumes struct {
	mu        sync.Mutex
	block     chan struct{} // non-nil: CleanupPods waits for it to close
	cleanups  int
	err       error
	setUps    int
	tornDown  []types.UID
	cleanedUp []types.UID
}

func (f *fakeVolumes) PodVolumes(types.UID) map[string]noderuntime.Volume { return nil }
func (f *fakeVolumes) Run(ctx context.Context) error                      { <-ctx.Done(); return nil }
func (f *fakeVolumes) SetUpPod(context.Context, *corev1.Pod) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setUps++
	return f.err
}
func (f *fakeVolumes) TearDownPod(_ context.Context, pod *corev1.Pod) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tornDown = append(f.tornDown, pod.UID)
	return nil
}
func (f *fakeVolumes) CleanupPods(_ context.Context, removed func(types.UID) bool) error {
	if f.block != nil {
		<-f.block
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups++
	for _, uid := range []types.UID{"gone", "kept"} {
		if removed(uid) {
			f.cleanedUp = append(f.cleanedUp, uid)
		}
	}
	return nil
}

var _ volumes.Manager = (*fakeVolumes)(nil)

// countingRuntime counts SyncPod calls.
type countingRuntime struct {
	fakeRuntime
	syncs int
}

func (r *countingRuntime) SyncPod(context.Context, *corev1.Pod, *noderuntime.PodStatus) *noderuntime.SyncResult {
	r.syncs++
	return &noderuntime.SyncResult{}
}

func TestAVolumeNotReadyLeavesThePodPendingAndTheRuntimeUntouched(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, "a")
	rt := &countingRuntime{}
	notReady := fmt.Errorf(`volume "cfg": configmap "app" not found: %w`, volumes.ErrNotReady)
	vols := &fakeVolumes{err: notReady}
	st := NewMemoryStatuses()
	s := NewSyncer(rt, st, nil, testingclock.NewFakeClock(t0), testr.New(t), Config{NodeName: "n", NodeIP: "127.0.0.1"}, WithVolumes(vols))
	_, err := s.SyncPod(t.Context(), podworkers.SyncPodCreate, pod, nil, &noderuntime.PodStatus{ID: pod.UID})
	if !errors.Is(err, volumes.ErrNotReady) {
		t.Fatalf("SyncPod err = %v, want ErrNotReady (retried with the workers' backoff)", err)
	}
	if rt.syncs != 0 {
		t.Fatalf("the runtime synced %d times while a volume was not ready", rt.syncs)
	}
	got, _ := st.GetPodStatus(pod.UID)
	if got.Phase != corev1.PodPending || got.ContainerStatuses[0].State.Waiting == nil || got.ContainerStatuses[0].State.Waiting.Reason != "ContainerCreating" {
		t.Fatalf("status %s %+v, want Pending with the container waiting in ContainerCreating", got.Phase, got.ContainerStatuses[0].State)
	}
	vols.err = nil
	if _, err := s.SyncPod(t.Context(), podworkers.SyncPodSync, pod, nil, &noderuntime.PodStatus{ID: pod.UID}); err != nil || rt.syncs != 1 {
		t.Fatalf("once the volume is ready: err %v, runtime syncs %d", err, rt.syncs)
	}
	if err := s.SyncTerminatedPod(t.Context(), pod, &noderuntime.PodStatus{ID: pod.UID}); err != nil {
		t.Fatal(err)
	}
	if len(vols.tornDown) != 1 || vols.tornDown[0] != pod.UID {
		t.Fatalf("torn down %v, want the pod once", vols.tornDown)
	}
}

func TestHousekeepingTearsDownTheVolumesOfRemovedPods(t *testing.T) {
	lt := newLoopTest(t, Config{})
	vols := &fakeVolumes{}
	lt.agent.volumes = vols
	lt.workers.setRunning("kept", true)
	lt.agent.cleanupVolumes(t.Context())
	lt.agent.cleanups.Wait()
	if len(vols.cleanedUp) != 1 || vols.cleanedUp[0] != "gone" {
		t.Fatalf("cleaned up %v, want only the removed pod that runs nothing", vols.cleanedUp)
	}
}

func TestAVolumeCleanupThatHangsDoesNotHoldTheSyncLoop(t *testing.T) {
	lt := newLoopTest(t, Config{})
	vols := &fakeVolumes{block: make(chan struct{})}
	lt.agent.volumes = vols
	lt.agent.cleanupVolumes(t.Context()) // returns while CleanupPods hangs
	lt.agent.cleanupVolumes(t.Context()) // skipped: one is running
	close(vols.block)
	lt.agent.cleanups.Wait()
	if vols.cleanups != 1 {
		t.Fatalf("%d cleanups, want 1 (the second pass skipped while the first ran)", vols.cleanups)
	}
	lt.agent.cleanupVolumes(t.Context())
	lt.agent.cleanups.Wait()
	if vols.cleanups != 2 {
		t.Fatalf("%d cleanups, want 2 once the first returned", vols.cleanups)
	}
}

func TestTheAgentRunsTheVolumeManagerItIsGiven(t *testing.T) {
	lt := newLoopTest(t, Config{})
	vols := &volumestest.Fake{}
	lt.agent.volumes = vols
	lt.start()
	lt.waitFor("the volume manager runs", func() bool {
		_, _, runs := vols.Calls()
		return runs == 1
	})
}
