package plegtest

import (
	"testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func statusWith(state noderuntime.ContainerState) *noderuntime.PodStatus {
	return &noderuntime.PodStatus{ContainerStatuses: []*noderuntime.ContainerStatus{
		{ID: noderuntime.ContainerID{Type: "sim", ID: "c1"}, State: state}}}
}

// An answer to a wait that began while the container ran is judged against
// what was seen when the wait began, not against a later poll that already
// saw the exit; an answer older than what was seen then is still a
// regression.
func TestMonitorJudgesAWaitAgainstWhatWasSeenWhenItBegan(t *testing.T) {
	m := newMonitor()
	if bad := m.check("p", statusWith(noderuntime.ContainerStateRunning)); len(bad) != 0 {
		t.Fatalf("first status: %v", bad)
	}
	before := m.clone()
	if bad := m.check("p", statusWith(noderuntime.ContainerStateExited)); len(bad) != 0 {
		t.Fatalf("a later poll: %v", bad)
	}
	if bad := before.check("p", statusWith(noderuntime.ContainerStateRunning)); len(bad) != 0 {
		t.Errorf("an answer as new as the view when the wait began was flagged: %v", bad)
	}
	m.note(statusWith(noderuntime.ContainerStateRunning))
	if bad := m.check("p", statusWith(noderuntime.ContainerStateRunning)); len(bad) == 0 {
		t.Error("note lowered the rank a later poll had seen: a real regression went unflagged")
	}
	if bad := before.check("p", statusWith(noderuntime.ContainerStateCreated)); len(bad) == 0 {
		t.Error("an answer older than the view when the wait began was not flagged")
	}
}
