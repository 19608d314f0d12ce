package cri

import (
	"sort"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// PodStatusFromEvent converts a CRI container event (GetContainerEvents)
// into the status of the pod it is about, as far as the event shows it: the
// event's sandbox and every container in that sandbox, converted exactly as
// GetPodStatus converts them (hash and restart count from the annotations,
// termination messages, the sandbox's IPs when it is ready), newest first.
// An event does not show the pod's other sandboxes; the evented PLEG merges
// it with what it knows (it is a pleg.EventDecoder). ok is false for an event
// without a sandbox status (a removed sandbox) and for sandboxes of other
// instances or other CRI clients. It makes no CRI call and is safe for
// concurrent use.
func (m *Manager) PodStatusFromEvent(ev *runtimeapi.ContainerEventResponse) (status *noderuntime.PodStatus, ok bool) {
	sb := ev.GetPodSandboxStatus()
	labels := sb.GetLabels()
	if sb == nil || sb.GetId() == "" || labels[noderuntime.LabelInstance] != m.cfg.InstanceID {
		return nil, false
	}
	uid := podUIDOf(labels)
	if uid == "" {
		return nil, false
	}
	status = &noderuntime.PodStatus{
		ID:              uid,
		Name:            labels[noderuntime.LabelPodName],
		Namespace:       labels[noderuntime.LabelPodNamespace],
		SandboxStatuses: []*runtimeapi.PodSandboxStatus{sb},
		TimeStamp:       fromNanos(ev.GetCreatedAt()),
	}
	if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
		status.IPs = sandboxIPs(sb)
	}
	listed := &runtimeapi.Container{PodSandboxId: sb.GetId()}
	for _, c := range ev.GetContainersStatuses() {
		if c == nil || c.GetId() == "" {
			continue
		}
		status.ContainerStatuses = append(status.ContainerStatuses, m.toContainerStatus(listed, c))
	}
	sort.SliceStable(status.ContainerStatuses, func(i, j int) bool {
		return status.ContainerStatuses[i].CreatedAt.After(status.ContainerStatuses[j].CreatedAt)
	})
	return status, true
}
