package sim

import "maps"

// podUIDLabel is the label the kubelet, and nodekit's CRI manager, put on
// every sandbox and container of a pod. Lists filtered by it (GetPodStatus
// on every sync) read the pod's own objects through an index instead of
// scanning the whole runtime: containerd scans, but a benchmark on the
// simulated runtime should measure the agent, not the simulation.
const podUIDLabel = "io.kubernetes.pod.uid"

// labelIndex holds objects of one kind by their pod UID label, then ID.
type labelIndex[T any] map[string]map[string]T

func (ix labelIndex[T]) add(labels map[string]string, id string, v T) {
	uid, ok := labels[podUIDLabel]
	if !ok {
		return
	}
	if ix[uid] == nil {
		ix[uid] = map[string]T{}
	}
	ix[uid][id] = v
}

func (ix labelIndex[T]) remove(labels map[string]string, id string) {
	uid, ok := labels[podUIDLabel]
	if !ok {
		return
	}
	delete(ix[uid], id)
	if len(ix[uid]) == 0 {
		delete(ix, uid)
	}
}

// candidates returns the objects a label selector can match: those of its
// pod when it names a pod UID, else all.
func (ix labelIndex[T]) candidates(sel map[string]string, all map[string]T) map[string]T {
	uid, ok := sel[podUIDLabel]
	if !ok {
		return all
	}
	return ix[uid]
}

// sameObjects reports whether an index holds exactly the objects of all
// that carry the pod UID label (tests check the index against a scan).
func (ix labelIndex[T]) sameObjects(all map[string]T, labelsOf func(T) map[string]string) bool {
	want := labelIndex[T]{}
	for id, v := range all {
		want.add(labelsOf(v), id, v)
	}
	if len(want) != len(ix) {
		return false
	}
	for uid, objs := range want {
		if !maps.EqualFunc(objs, ix[uid], func(T, T) bool { return true }) {
			return false
		}
	}
	return true
}
