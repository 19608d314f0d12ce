package agent

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// listing is one listing of the runtime's running pods, made for
// housekeeping off the sync loop.
type listing struct {
	pods []*noderuntime.Pod
	err  error
}

// readyForHousekeeping reports whether housekeeping may judge pods: every
// source has been heard from, so that a restarted agent never stops a pod
// whose source has not spoken yet, and no update waits to be handled.
func (a *Agent) readyForHousekeeping() bool {
	return a.config.SeenAllSources() && len(a.config.Updates()) == 0
}

// startHousekeeping begins a housekeeping pass on a housekeeping tick: it
// lists the runtime's running pods on a goroutine of its own, bounded by
// HousekeepingTimeout, and the sync loop finishes the pass (housekeeping)
// when the listing arrives, so that a hung runtime never stalls the loop.
// A tick that comes while a listing is in flight is skipped. Sync loop
// only.
func (a *Agent) startHousekeeping(ctx context.Context) {
	if a.listing {
		a.log.V(4).Info("Skipping housekeeping: the previous runtime listing has not returned")
		return
	}
	if !a.readyForHousekeeping() {
		a.housekeepings.Add(1)
		return
	}
	a.listing = true
	go func() {
		listCtx, cancel := context.WithTimeout(ctx, a.cfg.HousekeepingTimeout)
		defer cancel()
		pods, err := a.rt.GetPods(listCtx, false)
		select {
		case a.listed <- listing{pods: pods, err: err}:
		case <-ctx.Done():
		}
	}()
}

// housekeeping finishes a pass with the runtime's listing l: it forgets
// finished workers, restarts desired pods whose worker finished, stops
// pods that are no longer wanted and pods only the runtime knows, and
// deletes orphaned mirror pods. Like startHousekeeping it does nothing
// unless readyForHousekeeping (updates may have come since the listing
// began). Sync loop only.
func (a *Agent) housekeeping(ctx context.Context, l listing) {
	a.listing = false
	defer a.housekeepings.Add(1)
	if !a.readyForHousekeeping() {
		return
	}
	known := a.syncKnownPods()
	a.forgetStatuses(known)
	a.cleanupProbes(known)
	a.killOrphans(l, known)
	a.deleteOrphanedMirrors(ctx)
	a.cleanupVolumes(ctx)
	a.releaseWaiting() // finished workers may have freed room
}

// cleanupVolumes tears down the volumes of pods that are gone and stopped
// (SyncTerminatedPod normally did already) on a goroutine of its own, as
// it unmounts, removes directories and waits for the pods' set-ups, so
// that a slow disk or API server never stalls the sync loop. A pass that
// comes while the previous cleanup runs is skipped.
func (a *Agent) cleanupVolumes(ctx context.Context) {
	if a.volumes == nil {
		return
	}
	if !a.cleaningVolumes.CompareAndSwap(false, true) {
		a.log.V(4).Info("Skipping volume cleanup: the previous one has not returned")
		return
	}
	removed := func(uid types.UID) bool {
		return a.registry.Get(uid) == nil && !a.workers.CouldHaveRunningContainers(uid)
	}
	a.cleanups.Add(1)
	go func() {
		defer a.cleanups.Done()
		defer a.cleaningVolumes.Store(false)
		if err := a.volumes.CleanupPods(ctx, removed); err != nil && ctx.Err() == nil {
			a.log.Error(err, "Volume cleanup failed")
		}
	}()
}

// syncKnownPods has the workers forget finished workers and returns the
// state of the others. A desired pod whose worker is gone is started
// afresh with a SyncPodCreate, as the kubelet's HandlePodCleanups does: its
// UID came back while its previous incarnation was terminating (a static
// manifest removed and put back), the workers remembered the restart
// request, and forgot the worker once it finished. The new incarnation
// starts from the pod's own status, as a new pod does: the old one's final
// (terminal) status is forgotten, or the pod could never leave its phase.
// Rejected pods and static pods waiting for a namesake never had a worker
// and are left alone.
func (a *Agent) syncKnownPods() map[types.UID]podworkers.PodWorkerSync {
	desired := a.registry.List()
	known := a.workers.SyncKnownPods(desired)
	for _, pod := range desired {
		if _, ok := known[pod.UID]; ok || a.isRejected(pod.UID) || a.isPending(pod.UID) {
			continue
		}
		a.log.V(2).Info("Restarting pod: it is desired and its worker has finished (its UID was reused)",
			"pod", klog.KObj(pod), "podUID", pod.UID)
		a.statuses.RemovePodStatus(pod.UID)
		a.startOrUpdate(pod, podworkers.SyncPodCreate)
		known[pod.UID] = podworkers.PodWorkerSync{State: podworkers.SyncPod, HasConfig: true, Static: isStatic(pod)}
	}
	return known
}

func (a *Agent) forgetStatuses(known map[types.UID]podworkers.PodWorkerSync) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for uid := range a.started {
		if _, ok := known[uid]; !ok && a.registry.Get(uid) == nil {
			delete(a.started, uid)
			a.statuses.RemovePodStatus(uid)
		}
	}
	for uid := range a.rejected {
		if a.registry.Get(uid) == nil {
			delete(a.rejected, uid)
			a.statuses.RemovePodStatus(uid)
		}
	}
}

// killOrphans stops the running pods of the listing that no worker knows
// and no source wants.
func (a *Agent) killOrphans(l listing, known map[types.UID]podworkers.PodWorkerSync) {
	if l.err != nil {
		a.log.Error(l.err, "Could not list running pods for housekeeping")
		return
	}
	for _, rp := range l.pods {
		if _, ok := known[rp.ID]; ok || a.registry.Get(rp.ID) != nil {
			continue
		}
		a.log.Info("Stopping orphaned pod", "pod", klog.KRef(rp.Namespace, rp.Name), "podUID", rp.ID)
		a.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodKill, RunningPod: rp})
	}
}

// runContainerGC removes dead containers, and everything of pods that are
// gone and stopped, every ContainerGCPeriod on a goroutine of its own (the
// kubelet's container GC loop), so that a slow runtime never delays the
// sync loop. It does nothing until every source has been heard from, and
// nothing at all when the runtime is not a noderuntime.GarbageCollector.
func (a *Agent) runContainerGC(ctx context.Context) error {
	gc, ok := a.rt.(noderuntime.GarbageCollector)
	if !ok {
		return nil
	}
	t := a.clk.NewTicker(a.cfg.ContainerGCPeriod)
	defer t.Stop()
	removed := func(uid types.UID) bool {
		return a.registry.Get(uid) == nil && !a.workers.CouldHaveRunningContainers(uid)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
		if !a.config.SeenAllSources() {
			continue
		}
		if err := gc.GarbageCollect(ctx, removed); err != nil && ctx.Err() == nil {
			a.log.Error(err, "Container garbage collection failed")
		}
	}
}
