package status

import (
	"context"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/nodekit/nodekit/internal/podannotations"
)

// podSync is one status to bring to the API server.
type podSync struct {
	seq       uint64    // orders the change among all pods' changes
	uid       types.UID // the pod's UID in the agent
	apiUID    types.UID // the UID of the API object that carries its status
	name      string
	namespace string
	version   uint64
	status    *corev1.PodStatus
}

// syncBatch writes what needs writing: statuses not yet written (unless
// their pod is backing off) and pods due for another look; with all, also
// pods someone else changed and deleted pods ready to go, and it forgets
// the bookkeeping of pods no longer cached.
func (m *StatusManager) syncBatch(ctx context.Context, all bool) {
	for _, w := range m.collect(all) {
		if ctx.Err() != nil {
			return
		}
		m.syncPod(ctx, w)
	}
}

func (m *StatusManager) collect(all bool) []podSync {
	cached := m.snapshot()
	now := m.clk.Now()
	live := map[types.UID]bool{}
	var work []podSync
	for uid, c := range cached {
		if c.deleted {
			continue
		}
		apiUID, name, ns, ok := m.translate(uid, c)
		if !ok {
			m.log.V(4).Info("Pod status waits for its mirror pod", "pod", klog.KRef(c.podNamespace, c.podName), "podUID", uid)
			continue
		}
		live[apiUID] = true
		r, retrying := m.retries[uid]
		due := retrying && !r.at.After(now)
		w := podSync{seq: c.seq, uid: uid, apiUID: apiUID, name: name, namespace: ns, version: c.version, status: c.status}
		switch {
		case m.apiVersions[apiUID] < c.version:
			if all || due || !retrying {
				work = append(work, w)
			}
		case (all || due) && m.deletable(uid, c.status):
			work = append(work, w)
		case due && m.deleting(uid):
			m.backoff(uid) // look again until its resources are reclaimed
		case all && m.needsReconcile(apiUID, c.status):
			delete(m.apiVersions, apiUID)
			work = append(work, w)
		case due:
			delete(m.retries, uid)
		}
	}
	if all {
		for apiUID := range m.apiVersions {
			if !live[apiUID] {
				delete(m.apiVersions, apiUID)
			}
		}
		for uid := range m.retries {
			if _, ok := cached[uid]; !ok {
				delete(m.retries, uid)
			}
		}
	}
	// Oldest change first: after an outage, statuses reach the API server
	// in the order the agent set them.
	sort.Slice(work, func(i, j int) bool { return work[i].seq < work[j].seq })
	return work
}

// translate finds the API object that carries the pod's status.
func (m *StatusManager) translate(uid types.UID, c *cachedStatus) (types.UID, string, string, bool) {
	if m.pods == nil {
		return uid, c.podName, c.podNamespace, true
	}
	return m.pods.TranslateUID(uid)
}

// syncPod reads the pod from the API server, patches its status and, if it
// is being deleted and its resources are reclaimed, deletes it.
func (m *StatusManager) syncPod(ctx context.Context, w podSync) {
	log := m.log.WithValues("pod", klog.KRef(w.namespace, w.name), "podUID", w.uid)
	pods := m.client.CoreV1().Pods(w.namespace)
	pod, err := pods.Get(ctx, w.name, metav1.GetOptions{})
	if err == nil || answered(err) {
		m.reachable()
	}
	switch {
	case apierrors.IsNotFound(err):
		log.V(3).Info("Pod is not in the API server; status not written")
		delete(m.retries, w.uid)
		return
	case err != nil:
		log.Error(err, "Failed to read pod for its status; will retry")
		m.backoffAfter(w.uid, err)
		return
	case pod.UID != w.apiUID:
		log.V(2).Info("Pod was recreated in the API server; status not written", "apiUID", pod.UID)
		delete(m.retries, w.uid)
		return
	}
	merged := mergeForAPI(&pod.Status, w.status)
	if !apiequality.Semantic.DeepEqual(&pod.Status, merged) {
		patch, err := statusPatch(pod.UID, &pod.Status, merged)
		if err != nil {
			log.Error(err, "Failed to build status patch")
			return
		}
		updated, err := pods.Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		if err != nil {
			log.Error(err, "Failed to patch pod status; will retry")
			m.backoff(w.uid)
			return
		}
		log.V(3).Info("Patched pod status", "version", w.version, "patch", string(patch))
		pod = updated
	}
	m.apiVersions[w.apiUID] = w.version
	if m.deleteIfDone(ctx, log, pod, w) {
		m.backoff(w.uid)
		return
	}
	delete(m.retries, w.uid)
}

// deleteIfDone deletes a pod that is being deleted, whose newest status is
// written and whose resources are reclaimed, with grace period 0 and its
// UID as precondition. Mirror pods are never deleted here. It reports
// whether the pod must be looked at again.
func (m *StatusManager) deleteIfDone(ctx context.Context, log klog.Logger, pod *corev1.Pod, w podSync) bool {
	if pod.DeletionTimestamp == nil || isMirror(pod) || m.deletion == nil {
		return false
	}
	if !m.deletion.PodResourcesAreReclaimed(pod, w.status) {
		log.V(4).Info("Deleted pod still holds resources on the node")
		return true
	}
	err := m.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      metav1.NewUIDPreconditions(string(pod.UID)),
	})
	if err != nil && !apierrors.IsNotFound(err) {
		log.Error(err, "Failed to delete pod from the API server; will retry")
		return true
	}
	log.V(2).Info("Pod removed from the API server")
	m.markDeleted(w.uid)
	return false
}

// deletable reports whether the agent's copy of the pod is being deleted and
// its resources are reclaimed, so the pod may leave the API server.
func (m *StatusManager) deletable(uid types.UID, status *corev1.PodStatus) bool {
	if m.pods == nil || m.deletion == nil {
		return false
	}
	pod, ok := m.pods.GetPodByUID(uid)
	return ok && pod.DeletionTimestamp != nil && !isMirror(pod) && m.deletion.PodResourcesAreReclaimed(pod, status)
}

// deleting reports whether the agent's copy of the pod is being deleted.
func (m *StatusManager) deleting(uid types.UID) bool {
	if m.pods == nil || m.deletion == nil {
		return false
	}
	pod, ok := m.pods.GetPodByUID(uid)
	return ok && pod.DeletionTimestamp != nil && !isMirror(pod)
}

// needsReconcile reports whether the API status (as the agent last received
// it) differs from what the manager would write, e.g. because another
// client changed it.
func (m *StatusManager) needsReconcile(apiUID types.UID, status *corev1.PodStatus) bool {
	if m.pods == nil {
		return false
	}
	pod, ok := m.pods.GetPodByUID(apiUID)
	if !ok {
		return false
	}
	api := pod.Status.DeepCopy()
	normalize(api, &pod.Spec)
	want := mergeForAPI(api, status)
	normalize(want, &pod.Spec)
	if apiequality.Semantic.DeepEqual(api, want) {
		return false
	}
	m.log.V(3).Info("Pod status in the API server differs from the cached one; writing it again", "pod", klog.KObj(pod), "podUID", apiUID)
	return true
}

func isMirror(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[podannotations.Mirror]
	return ok
}
