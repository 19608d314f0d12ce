package podworkers

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// WorkQueue holds the pods that are due a sync at some time: PodWorkers
// enqueues every pod after each sync (at the resync interval, or after a
// back-off on error) and the agent's sync ticker drains the due ones with
// GetWork and hands them back to UpdatePod as SyncPodSync. It is the
// kubelet's queue.WorkQueue. All methods are safe for concurrent use.
type WorkQueue struct {
	clock clock.Clock

	mu    sync.Mutex
	queue map[types.UID]time.Time
}

// NewWorkQueue returns an empty queue that reads the time from clk.
func NewWorkQueue(clk clock.Clock) *WorkQueue {
	return &WorkQueue{clock: clk, queue: map[types.UID]time.Time{}}
}

// Enqueue makes uid due delay from now, unless it is already due sooner: the
// earliest request wins. The kubelet's queue lets the last request win; here
// a SyncHandler can ask for a sync when a container's restart backoff ends
// without the worker's later, regular resync pushing it back. A sync that
// comes earlier than needed is harmless.
func (q *WorkQueue) Enqueue(uid types.UID, delay time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	at := q.clock.Now().Add(delay)
	if prev, ok := q.queue[uid]; ok && prev.Before(at) {
		return
	}
	q.queue[uid] = at
}

// GetWork removes and returns every UID whose due time has come, in no
// particular order; nil when none is due. The caller owns the slice.
func (q *WorkQueue) GetWork() []types.UID {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	var due []types.UID
	for uid, at := range q.queue {
		if !at.After(now) {
			due = append(due, uid)
			delete(q.queue, uid)
		}
	}
	return due
}
