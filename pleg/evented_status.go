package pleg

import (
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// changeTime returns the time of the change an event reports, as the
// runtime recorded it on the object: CreatedAt for CONTAINER_CREATED,
// StartedAt for _STARTED, FinishedAt for _STOPPED (a sandbox has only its
// CreatedAt, which serves for its creation and start). The runtime builds an
// event's snapshot after the change, so the snapshot is newer than that
// time: stamping the cache entry with it never claims more than was
// observed. (The event's own CreatedAt is taken after the snapshot, so it
// could claim more.) Zero when the time is unknown (deletions, a sandbox
// stop).
func changeTime(ev *runtimeapi.ContainerEventResponse, snap *noderuntime.PodStatus) time.Time {
	id, typ := ev.GetContainerId(), ev.GetContainerEventType()
	for _, c := range snap.ContainerStatuses {
		if c.ID.ID != id {
			continue
		}
		switch typ {
		case runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT:
			return c.CreatedAt
		case runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT:
			return c.StartedAt
		case runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT:
			return c.FinishedAt
		}
		return time.Time{}
	}
	for _, sb := range snap.SandboxStatuses {
		if sb.GetId() == id && (typ == runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT ||
			typ == runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT) {
			return fromNanos(sb.GetCreatedAt())
		}
	}
	return time.Time{}
}

// mergeSnapshot returns the pod's status with an event's snapshot (one
// sandbox and its containers) merged into the cached status base:
//
//   - an object in both keeps the later state of the two (the cache may
//     hold a newer view than a late event);
//   - an object only in base is kept: the runtime reports every removal
//     with a CONTAINER_DELETED event (applyRemoval), while an object can be
//     missing from a snapshot merely because the runtime had not stored it
//     yet when it built the snapshot;
//   - othersLive reports whether an object of another sandbox may still
//     change (a ready sandbox, a container not exited), in which case the
//     snapshot does not vouch for the whole pod.
//
// Lists are newest first and hold each ID once. The pod's IPs are the
// snapshot's when its sandbox is the newest and ready, else the cached ones
// (a finished pod keeps its IP). base is not modified.
func mergeSnapshot(base, snap *noderuntime.PodStatus) (merged *noderuntime.PodStatus, othersLive bool) {
	out := &noderuntime.PodStatus{ID: snap.ID, Name: snap.Name, Namespace: snap.Namespace, TimeStamp: snap.TimeStamp}
	var sb *runtimeapi.PodSandboxStatus
	if len(snap.SandboxStatuses) > 0 {
		sb = snap.SandboxStatuses[0]
	}
	found := false
	for _, s := range base.SandboxStatuses {
		if sb != nil && s.GetId() == sb.GetId() {
			found = true
			out.SandboxStatuses = append(out.SandboxStatuses, laterSandbox(s, sb))
			continue
		}
		if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			othersLive = true
		}
		out.SandboxStatuses = append(out.SandboxStatuses, s)
	}
	if sb != nil && !found {
		out.SandboxStatuses = append(out.SandboxStatuses, sb)
	}
	fresh := make(map[string]*noderuntime.ContainerStatus, len(snap.ContainerStatuses))
	for _, c := range snap.ContainerStatuses {
		fresh[c.ID.ID] = c
	}
	for _, c := range base.ContainerStatuses {
		if n, ok := fresh[c.ID.ID]; ok {
			out.ContainerStatuses = append(out.ContainerStatuses, laterContainer(c, n))
			delete(fresh, c.ID.ID)
			continue
		}
		if (sb == nil || c.SandboxID != sb.GetId()) && c.State != noderuntime.ContainerStateExited {
			othersLive = true
		}
		out.ContainerStatuses = append(out.ContainerStatuses, c)
	}
	for _, c := range snap.ContainerStatuses {
		if _, ok := fresh[c.ID.ID]; ok {
			out.ContainerStatuses = append(out.ContainerStatuses, c)
		}
	}
	sort.SliceStable(out.SandboxStatuses, func(i, j int) bool {
		return out.SandboxStatuses[i].GetCreatedAt() > out.SandboxStatuses[j].GetCreatedAt()
	})
	sort.SliceStable(out.ContainerStatuses, func(i, j int) bool {
		return out.ContainerStatuses[i].CreatedAt.After(out.ContainerStatuses[j].CreatedAt)
	})
	out.IPs = base.IPs
	if sb != nil && len(out.SandboxStatuses) > 0 && out.SandboxStatuses[0].GetId() == sb.GetId() &&
		sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY && len(snap.IPs) > 0 {
		out.IPs = snap.IPs
	}
	return out, othersLive
}

// laterSandbox returns the later of two views of one sandbox (the new one
// when they are equally advanced).
func laterSandbox(old, cur *runtimeapi.PodSandboxStatus) *runtimeapi.PodSandboxStatus {
	if sandboxRank(cur) >= sandboxRank(old) {
		return cur
	}
	return old
}

// laterContainer returns the later of two views of one container (the new
// one when they are equally advanced).
func laterContainer(old, cur *noderuntime.ContainerStatus) *noderuntime.ContainerStatus {
	if rank(convertState(cur.State)) >= rank(convertState(old.State)) {
		return cur
	}
	return old
}

func sandboxRank(s *runtimeapi.PodSandboxStatus) int {
	if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
		return rankRunning
	}
	return rankExited
}

// withoutObject returns a copy of status without the container id, or
// without the sandbox id and its containers.
func withoutObject(status *noderuntime.PodStatus, id string) *noderuntime.PodStatus {
	out := *status
	out.SandboxStatuses = nil
	out.ContainerStatuses = nil
	for _, s := range status.SandboxStatuses {
		if s.GetId() != id {
			out.SandboxStatuses = append(out.SandboxStatuses, s)
		}
	}
	for _, c := range status.ContainerStatuses {
		if c.ID.ID != id && c.SandboxID != id {
			out.ContainerStatuses = append(out.ContainerStatuses, c)
		}
	}
	return &out
}

// objectsOf returns the state of each container and sandbox of a status, by
// ID; an empty map for nil.
func objectsOf(status *noderuntime.PodStatus) map[string]containerState {
	out := make(map[string]containerState)
	if status == nil {
		return out
	}
	for _, c := range status.ContainerStatuses {
		out[c.ID.ID] = convertState(c.State)
	}
	for _, s := range status.SandboxStatuses {
		out[s.GetId()] = stateExited
		if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			out[s.GetId()] = stateRunning
		}
	}
	return out
}

// objectsOfPod is objectsOf for a listed pod.
func objectsOfPod(pod *noderuntime.Pod) map[string]containerState {
	out := make(map[string]containerState, len(pod.Containers)+len(pod.Sandboxes))
	for _, list := range [2][]*noderuntime.Container{pod.Containers, pod.Sandboxes} {
		for _, c := range list {
			out[c.ID.ID] = convertState(c.State)
		}
	}
	return out
}

// keepIPs returns the IPs a fresh status should carry: its own, or, when it
// has none and no ready sandbox, the cached ones (a finished pod keeps its
// IP, and the network may be torn down before the PLEG looks).
func keepIPs(cache *Cache, uid types.UID, status *noderuntime.PodStatus) []string {
	if len(status.IPs) != 0 {
		return status.IPs
	}
	for _, sb := range status.SandboxStatuses {
		if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			return status.IPs
		}
	}
	old, _ := cache.Get(uid)
	return old.IPs
}

// fromNanos converts a CRI timestamp; 0 stays the zero time.
func fromNanos(ns int64) time.Time {
	if ns <= 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
