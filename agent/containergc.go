package agent

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/types"
)

// AllUnusedDeleter is an optional capability of a Runtime: removing, on
// demand, every dead container and sandbox that is not needed, including
// all of those of pods that still exist but have terminated (the kubelet's
// containerGC.DeleteAllUnusedContainers). runtime/cri's Manager is one.
type AllUnusedDeleter interface {
	DeleteAllUnusedContainers(ctx context.Context, isPodRemoved, isPodTerminated func(types.UID) bool) error
}

// ErrNoContainerGC is returned by DeleteAllUnusedContainers when the
// runtime cannot remove dead containers on demand.
var ErrNoContainerGC = errors.New("the container runtime does not support deleting all unused containers")

// DeleteAllUnusedContainers removes every dead container and sandbox the
// agent no longer needs, now and whatever their age: those of pods that
// are gone (only once every source has been heard from, as the periodic
// container GC) and all of those of pods whose worker has terminated. The
// eviction manager calls it to reclaim disk before evicting a pod.
func (a *Agent) DeleteAllUnusedContainers(ctx context.Context) error {
	gc, ok := a.rt.(AllUnusedDeleter)
	if !ok {
		return ErrNoContainerGC
	}
	seenAll := a.config.SeenAllSources()
	removed := func(uid types.UID) bool {
		return seenAll && a.registry.Get(uid) == nil && !a.workers.CouldHaveRunningContainers(uid)
	}
	return gc.DeleteAllUnusedContainers(ctx, removed, a.workers.IsPodKnownTerminated)
}
