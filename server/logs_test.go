package server

import (
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLogContainerIDFollowsTheKubeletsRules(t *testing.T) {
	t.Parallel()
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	term := func(id string) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ContainerID: id}}
	}
	waiting := func(reason string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
	}
	tests := []struct {
		name     string
		st       *corev1.ContainerStatus
		previous bool
		wantID   string
		wantErr  string
	}{
		{name: "a running container reads its own log", st: &corev1.ContainerStatus{ContainerID: "containerd://b", State: running, LastTerminationState: term("containerd://a")}, wantID: "b"},
		{name: "previous reads the last terminated one", st: &corev1.ContainerStatus{ContainerID: "containerd://b", State: running, LastTerminationState: term("containerd://a")}, previous: true, wantID: "a"},
		{name: "previous without a restart is an error", st: &corev1.ContainerStatus{ContainerID: "containerd://b", State: running}, previous: true, wantErr: `previous terminated container "main" in pod "web" not found`},
		{name: "a terminated container reads its log", st: &corev1.ContainerStatus{State: term("containerd://t")}, wantID: "t"},
		{name: "a terminated state without an ID falls back to the last one", st: &corev1.ContainerStatus{State: term(""), LastTerminationState: term("containerd://l")}, wantID: "l"},
		{name: "a waiting container with a last state reads it", st: &corev1.ContainerStatus{State: waiting("CrashLoopBackOff"), LastTerminationState: term("containerd://l")}, wantID: "l"},
		{name: "an image pull failure says so", st: &corev1.ContainerStatus{State: waiting("ErrImagePull")}, wantErr: "is waiting to start: image can't be pulled"},
		{name: "a back-off says so", st: &corev1.ContainerStatus{State: waiting("ImagePullBackOff")}, wantErr: "trying and failing to pull image"},
		{name: "another waiting reason is named", st: &corev1.ContainerStatus{State: waiting("ContainerCreating")}, wantErr: "is waiting to start: ContainerCreating"},
		{name: "no status yet has no logs yet", wantErr: "is waiting to start - no logs yet"},
	}
	for _, tt := range tests {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
		if tt.st != nil {
			tt.st.Name = "main"
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{*tt.st}
		}
		id, err := logContainerID(pod, "main", tt.previous)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || id.ID != tt.wantID || id.Type != "containerd" {
			t.Errorf("%s: id = %v, err %v; want containerd://%s", tt.name, id, err, tt.wantID)
		}
	}
}

func TestParseLogQueryAndCRIOptions(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	q, _ := url.ParseQuery("follow=true&timestamps=1&tailLines=5&limitBytes=100&sinceSeconds=30")
	lr, code, err := parseLogQuery(q)
	if err != nil {
		t.Fatalf("parse: %d %v", code, err)
	}
	o := criLogOptions(&lr.opts, now)
	if !o.Follow || !o.Timestamp || *o.TailLines != 5 || *o.LimitBytes != 100 || !o.Since.Equal(now.Add(-30*time.Second)) || lr.stream != corev1.LogStreamAll {
		t.Errorf("options = %+v, stream %q", o, lr.stream)
	}
	for query, want := range map[string]int{
		"tailLines=x": 400, "sinceTime=yesterday": 400, "limitBytes=0": 422, "sinceSeconds=0": 422,
		"stream=Both": 422, "stream=Stdout&tailLines=1": 422,
	} {
		q, _ := url.ParseQuery(query)
		if _, code, err := parseLogQuery(q); err == nil || code != want {
			t.Errorf("%s: %d %v, want %d", query, code, err, want)
		}
	}
}
