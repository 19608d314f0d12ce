package pleg

import (
	"reflect"
	"testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestAppendEvents(t *testing.T) {
	t.Parallel()
	const uid, cid = "pod-1", "c1"
	started := Event{ID: uid, Type: ContainerStarted, Data: cid}
	died := Event{ID: uid, Type: ContainerDied, Data: cid}
	removed := Event{ID: uid, Type: ContainerRemoved, Data: cid}
	changed := Event{ID: uid, Type: ContainerChanged, Data: cid}
	tests := []struct {
		name     string
		old, new containerState
		want     []Event
	}{
		{"a running container that stays running gives nothing", stateRunning, stateRunning, nil},
		{"an exited container that stays exited gives nothing", stateExited, stateExited, nil},
		{"an unknown container that stays unknown gives nothing", stateUnknown, stateUnknown, nil},
		{"a container that stays absent gives nothing", stateNonExistent, stateNonExistent, nil},
		{"a new running container gives ContainerStarted", stateNonExistent, stateRunning, []Event{started}},
		{"an exited container that runs again gives ContainerStarted", stateExited, stateRunning, []Event{started}},
		{"an unknown container that runs gives ContainerStarted", stateUnknown, stateRunning, []Event{started}},
		{"a running container that exits gives ContainerDied", stateRunning, stateExited, []Event{died}},
		{"a new exited container gives ContainerDied", stateNonExistent, stateExited, []Event{died}},
		{"an unknown container that exits gives ContainerDied", stateUnknown, stateExited, []Event{died}},
		{"a running container that turns unknown gives ContainerChanged", stateRunning, stateUnknown, []Event{changed}},
		{"an exited container that turns unknown gives ContainerChanged", stateExited, stateUnknown, []Event{changed}},
		{"a new unknown container gives ContainerChanged", stateNonExistent, stateUnknown, []Event{changed}},
		{"an exited container that vanishes gives ContainerRemoved", stateExited, stateNonExistent, []Event{removed}},
		{"a running container that vanishes gives ContainerDied and ContainerRemoved", stateRunning, stateNonExistent, []Event{died, removed}},
		{"an unknown container that vanishes gives ContainerDied and ContainerRemoved", stateUnknown, stateNonExistent, []Event{died, removed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := deref(appendEvents(nil, uid, cid, tt.old, tt.new))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("appendEvents(%s -> %s) = %v, want %v", tt.old, tt.new, got, tt.want)
			}
		})
	}
}

func TestConvertState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   noderuntime.ContainerState
		want containerState
	}{
		{"running stays running", noderuntime.ContainerStateRunning, stateRunning},
		{"exited stays exited", noderuntime.ContainerStateExited, stateExited},
		{"created counts as unknown", noderuntime.ContainerStateCreated, stateUnknown},
		{"unknown stays unknown", noderuntime.ContainerStateUnknown, stateUnknown},
		{"a state the PLEG does not know counts as unknown", "paused", stateUnknown},
	}
	for _, tt := range tests {
		if got := convertState(tt.in); got != tt.want {
			t.Errorf("%s: convertState(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestAppendPodEvents(t *testing.T) {
	t.Parallel()
	const uid = "p"
	run, exit := noderuntime.ContainerStateRunning, noderuntime.ContainerStateExited
	tests := []struct {
		name     string
		old, cur *noderuntime.Pod
		want     []Event
	}{
		{
			name: "a new pod gives events for its sandbox and its containers",
			cur:  pod(uid, ctr("c1", run), sandbox("s1", run)),
			want: []Event{{uid, ContainerStarted, "c1"}, {uid, ContainerStarted, "s1"}},
		},
		{
			name: "an unchanged pod gives nothing",
			old:  pod(uid, ctr("c1", run), sandbox("s1", run)),
			cur:  pod(uid, ctr("c1", run), sandbox("s1", run)),
		},
		{
			name: "a sandbox that stops gives ContainerDied with the sandbox ID",
			old:  pod(uid, ctr("c1", exit), sandbox("s1", run)),
			cur:  pod(uid, ctr("c1", exit), sandbox("s1", exit)),
			want: []Event{{uid, ContainerDied, "s1"}},
		},
		{
			name: "a replaced container gives ContainerRemoved for the old and ContainerStarted for the new",
			old:  pod(uid, ctr("c1", exit), sandbox("s1", run)),
			cur:  pod(uid, ctr("c2", run), sandbox("s1", run)),
			want: []Event{{uid, ContainerStarted, "c2"}, {uid, ContainerRemoved, "c1"}},
		},
		{
			name: "a vanished pod gives events for every container and sandbox",
			old:  pod(uid, ctr("c1", run), sandbox("s1", exit)),
			want: []Event{{uid, ContainerDied, "c1"}, {uid, ContainerRemoved, "c1"}, {uid, ContainerRemoved, "s1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := deref(appendPodEvents(nil, uid, tt.old, tt.cur))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("appendPodEvents() = %v, want %v", got, tt.want)
			}
		})
	}
}

func deref(events []*Event) []Event {
	var out []Event
	for _, ev := range events {
		out = append(out, *ev)
	}
	return out
}
