package volumestest

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/managers/volumes"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

var _ volumes.Manager = (*Fake)(nil)

// Fake is a volumes.Manager whose SetUpPod publishes the volumes set with
// SetVolumes (or fails with the error set with SetError). The zero value
// is ready to use; it is safe for concurrent use.
type Fake struct {
	mu       sync.Mutex
	vols     map[types.UID]map[string]noderuntime.Volume
	ready    map[types.UID]bool
	err      error
	setUps   []types.UID
	tornDown []types.UID
	runs     int
}

// SetVolumes sets what PodVolumes reports for uid once the pod is set up.
func (f *Fake) SetVolumes(uid types.UID, vols map[string]noderuntime.Volume) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.vols == nil {
		f.vols = map[types.UID]map[string]noderuntime.Volume{}
	}
	f.vols[uid] = vols
}

// SetError makes every SetUpPod fail with err (nil to succeed again).
func (f *Fake) SetError(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// SetUpPod implements volumes.Manager.
func (f *Fake) SetUpPod(_ context.Context, pod *corev1.Pod) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setUps = append(f.setUps, pod.UID)
	if f.err != nil {
		return f.err
	}
	if f.ready == nil {
		f.ready = map[types.UID]bool{}
	}
	f.ready[pod.UID] = true
	return nil
}

// PodVolumes implements volumes.Manager: the volumes set for a pod that is
// set up.
func (f *Fake) PodVolumes(uid types.UID) map[string]noderuntime.Volume {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]noderuntime.Volume{}
	if f.ready[uid] {
		for k, v := range f.vols[uid] {
			out[k] = v
		}
	}
	return out
}

// TearDownPod implements volumes.Manager.
func (f *Fake) TearDownPod(_ context.Context, pod *corev1.Pod) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tornDown = append(f.tornDown, pod.UID)
	delete(f.ready, pod.UID)
	return nil
}

// CleanupPods implements volumes.Manager: it tears down the set-up pods
// removed reports.
func (f *Fake) CleanupPods(_ context.Context, removed func(types.UID) bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for uid := range f.ready {
		if removed(uid) {
			f.tornDown = append(f.tornDown, uid)
			delete(f.ready, uid)
		}
	}
	return nil
}

// Run implements volumes.Manager: it counts the run and waits for ctx.
func (f *Fake) Run(ctx context.Context) error {
	f.mu.Lock()
	f.runs++
	f.mu.Unlock()
	<-ctx.Done()
	return nil
}

// Calls returns the pods SetUpPod and TearDownPod (or CleanupPods) were
// called for, in order, and how many times Run was called.
func (f *Fake) Calls() (setUps, tornDown []types.UID, runs int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]types.UID(nil), f.setUps...), append([]types.UID(nil), f.tornDown...), f.runs
}
