package pleg

import (
	"k8s.io/apimachinery/pkg/types"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// containerState is a container's state as the relist compares it: the
// runtime's states plus "non-existent" for a container absent from a list.
type containerState string

const (
	stateRunning     containerState = "running"
	stateExited      containerState = "exited"
	stateUnknown     containerState = "unknown"
	stateNonExistent containerState = "non-existent"
)

// convertState maps a runtime state to a relist state. As in the kubelet,
// "created" counts as unknown (nothing acts on it), and so does any state the
// PLEG does not know.
func convertState(s noderuntime.ContainerState) containerState {
	switch s {
	case noderuntime.ContainerStateRunning:
		return stateRunning
	case noderuntime.ContainerStateExited:
		return stateExited
	default:
		return stateUnknown
	}
}

// appendEvents appends to dst the events for one container (or sandbox)
// moving from oldState to newState, following the kubelet's generic PLEG:
// the new state decides the event, and a container that vanished without
// having been seen exited also gets a ContainerDied.
func appendEvents(dst []*Event, uid types.UID, cid string, oldState, newState containerState) []*Event {
	if oldState == newState {
		return dst
	}
	switch newState {
	case stateRunning:
		return append(dst, &Event{ID: uid, Type: ContainerStarted, Data: cid})
	case stateExited:
		return append(dst, &Event{ID: uid, Type: ContainerDied, Data: cid})
	case stateNonExistent:
		if oldState != stateExited {
			dst = append(dst, &Event{ID: uid, Type: ContainerDied, Data: cid})
		}
		return append(dst, &Event{ID: uid, Type: ContainerRemoved, Data: cid})
	default:
		return append(dst, &Event{ID: uid, Type: ContainerChanged, Data: cid})
	}
}

// appendPodEvents appends the events for every container and sandbox of a pod
// between two relists; old or cur is nil when the pod was absent. Sandboxes
// are compared like containers and their events carry the sandbox ID, as in
// the kubelet.
func appendPodEvents(dst []*Event, uid types.UID, old, cur *noderuntime.Pod) []*Event {
	if cur != nil {
		for _, list := range [2][]*noderuntime.Container{cur.Containers, cur.Sandboxes} {
			for _, c := range list {
				dst = appendEvents(dst, uid, c.ID.ID, stateOf(old, c.ID), convertState(c.State))
			}
		}
	}
	if old != nil {
		for _, list := range [2][]*noderuntime.Container{old.Containers, old.Sandboxes} {
			for _, c := range list {
				if stateOf(cur, c.ID) == stateNonExistent {
					dst = appendEvents(dst, uid, c.ID.ID, convertState(c.State), stateNonExistent)
				}
			}
		}
	}
	return dst
}

// stateOf returns the state of the container or sandbox id in pod, or
// non-existent. Pods hold a handful of containers, so a scan beats a map.
func stateOf(pod *noderuntime.Pod, id noderuntime.ContainerID) containerState {
	if pod == nil {
		return stateNonExistent
	}
	for _, list := range [2][]*noderuntime.Container{pod.Containers, pod.Sandboxes} {
		for _, c := range list {
			if c.ID == id {
				return convertState(c.State)
			}
		}
	}
	return stateNonExistent
}
