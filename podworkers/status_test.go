package podworkers

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// readingHandler is the fake handler that can also read a pod's status
// from the runtime, recording each read.
type readingHandler struct {
	*fakeHandler
	mu    sync.Mutex
	reads []types.UID
}

func (h *readingHandler) GetPodStatus(_ context.Context, uid types.UID, name, namespace string) (*noderuntime.PodStatus, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reads = append(h.reads, uid)
	return &noderuntime.PodStatus{ID: uid, Name: name, Namespace: namespace}, nil
}

func (h *readingHandler) readCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.reads)
}

// newReadingHarness is newHarness with a handler that is a PodStatusReader.
func newReadingHarness(t *testing.T, cfg Config) (*harness, *readingHandler) {
	hs := newHarness(t, cfg)
	rh := &readingHandler{fakeHandler: hs.h}
	hs.pw.handler = rh
	return hs, rh
}

// waitingOnCache waits until a worker blocks in the held cache for uid.
func (hs *harness) waitingOnCache(uid types.UID) {
	hs.t.Helper()
	select {
	case got := <-hs.cache.waiting:
		if got != uid {
			hs.t.Fatalf("pod %s waits on the cache, want %s", got, uid)
		}
	case <-time.After(failsafe):
		hs.t.Fatalf("pod %s never waited on the cache", uid)
	}
}

// TestKillGoesOnWhenTheCacheNeverUpdates: the PLEG's relists fail, so the
// cache never holds a status newer than the last sync; the terminating and
// then the terminated sync still run after TerminationStatusWait, with a
// status read from the runtime.
func TestKillGoesOnWhenTheCacheNeverUpdates(t *testing.T) {
	hs, rh := newReadingHarness(t, Config{TerminationStatusWait: 5 * time.Second})
	hs.run()
	pod := newPod("a", 1)
	hs.update(SyncPodCreate, pod)
	hs.expect(kindSync, pod.UID).ok()

	release := hs.cache.holdNext()
	defer release()
	hs.kill(pod, nil)
	hs.waitingOnCache(pod.UID)
	hs.clk.Step(4 * time.Second)
	if n := rh.readCount(); n != 0 {
		t.Fatalf("%d runtime reads before TerminationStatusWait, want 0", n)
	}
	hs.clk.Step(time.Second)
	c := hs.expect(kindTerminating, pod.UID)
	if c.status == nil || c.status.ID != pod.UID || c.status.Name != pod.Name || rh.readCount() != 1 {
		t.Fatalf("terminating sync with status %+v after %d runtime reads, want the one read for %s", c.status, rh.readCount(), pod.UID)
	}
	c.ok()
	hs.waitingOnCache(pod.UID)
	hs.clk.Step(5 * time.Second)
	hs.expect(kindTerminated, pod.UID).ok()
	hs.waitExit(pod.UID)
}

// TestSyncPodStillWaitsForTheCache: only termination has the bound; a
// running pod's sync never runs on a status the PLEG has not seen.
func TestSyncPodStillWaitsForTheCache(t *testing.T) {
	hs, rh := newReadingHarness(t, Config{TerminationStatusWait: 5 * time.Second})
	hs.run()
	pod := newPod("a", 1)
	release := hs.cache.holdNext()
	hs.update(SyncPodCreate, pod)
	hs.waitingOnCache(pod.UID)
	hs.clk.Step(time.Minute)
	select {
	case c := <-hs.h.calls:
		t.Fatalf("handler called (%s) while the cache had no status", c.kind)
	default:
	}
	release()
	hs.expect(kindSync, pod.UID).ok()
	if n := rh.readCount(); n != 0 {
		t.Errorf("%d runtime reads for a running pod, want 0", n)
	}
	hs.kill(pod, nil)
	hs.expect(kindTerminating, pod.UID).ok()
	hs.expect(kindTerminated, pod.UID).ok()
	hs.waitExit(pod.UID)
}
