package agent

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nodekit/nodekit/sources"
)

// MirrorClient creates and deletes mirror pods, the API server's copies of
// static pods. managers/status provides the default; without an API server
// there is none and static pods simply have no mirror.
type MirrorClient interface {
	// CreateMirrorPod creates the mirror pod of staticPod.
	CreateMirrorPod(ctx context.Context, staticPod *corev1.Pod) error
	// DeleteMirrorPod deletes the mirror pod podFullName ("name_namespace")
	// if its UID is *uid (any UID when nil), reporting whether it did.
	DeleteMirrorPod(ctx context.Context, podFullName string, uid *types.UID) (bool, error)
}

// isMirror reports whether pod is a mirror pod: it is shown by the API
// server for a static pod and is never run itself.
func isMirror(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[sources.AnnotationMirror]
	return ok
}

// isMirrorOf reports whether mirror is an up-to-date mirror of static.
func isMirrorOf(mirror, static *corev1.Pod) bool {
	hash, ok := static.Annotations[sources.AnnotationHash]
	return ok && mirror.Annotations[sources.AnnotationMirror] == hash && mirror.DeletionTimestamp == nil
}

// syncMirror makes the API server's mirror of a static pod match it: a
// stale or deleted mirror is removed, a missing one created. Errors are
// logged: the static pod runs whether or not its mirror exists.
func (s *Syncer) syncMirror(ctx context.Context, pod, mirror *corev1.Pod) {
	if s.mirrors == nil || !isStatic(pod) || pod.DeletionTimestamp != nil {
		return
	}
	if mirror != nil && isMirrorOf(mirror, pod) {
		return
	}
	log := s.log.WithValues("pod", klog.KObj(pod))
	if mirror != nil && mirror.DeletionTimestamp == nil {
		uid := mirror.UID
		if _, err := s.mirrors.DeleteMirrorPod(ctx, fullName(pod), &uid); err != nil {
			log.Error(err, "Could not delete outdated mirror pod")
			return
		}
	}
	if mirror != nil && mirror.DeletionTimestamp != nil {
		return // wait until the deleted mirror is gone before creating anew
	}
	if err := s.mirrors.CreateMirrorPod(ctx, pod); err != nil {
		log.Error(err, "Could not create mirror pod")
		return
	}
	log.V(2).Info("Created mirror pod")
}

// deleteOrphanedMirrors removes mirror pods whose static pod is gone.
func (a *Agent) deleteOrphanedMirrors(ctx context.Context) {
	if a.mirrors == nil {
		return
	}
	for _, m := range a.registry.OrphanedMirrors() {
		uid := m.UID
		if _, err := a.mirrors.DeleteMirrorPod(ctx, fullName(m), &uid); err != nil {
			a.log.Error(err, "Could not delete orphaned mirror pod", "pod", klog.KObj(m))
			continue
		}
		a.log.V(2).Info("Deleted orphaned mirror pod", "pod", klog.KObj(m))
	}
}
