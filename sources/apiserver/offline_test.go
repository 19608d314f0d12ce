package apiserver

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// seedCheckpoint writes pods into a new checkpoint directory.
func seedCheckpoint(t *testing.T, pods ...*corev1.Pod) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pod-checkpoints")
	if err := newCheckpoint(dir, logr.Discard()).save(pods); err != nil {
		t.Fatal(err)
	}
	return dir
}

// stepUntilSnapshot steps the fake clock by d, whenever a timer is armed,
// until a snapshot comes (the offline timer may not be armed yet at the
// first step; once it fired no timer may be left, and the snapshot may
// come late on a loaded machine) and returns it.
func (h *harness) stepUntilSnapshot(d time.Duration) []*corev1.Pod {
	h.t.Helper()
	deadline := time.After(waitLimit)
	for {
		if h.clk.HasWaiters() {
			h.clk.Step(d)
		}
		select {
		case pods := <-h.updates:
			return pods
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			h.t.Fatal("no snapshot sent")
		}
	}
}

// quiet fails if a snapshot comes soon.
func (h *harness) quiet(what string) {
	h.t.Helper()
	select {
	case pods := <-h.updates:
		h.t.Fatalf("%s: snapshot %v sent, want none", what, names(pods))
	case <-time.After(50 * time.Millisecond):
	}
}

func TestUnansweredFirstListServesTheCheckpointOffline(t *testing.T) {
	cached := pod("a", node)
	cached.Status.Phase = corev1.PodRunning
	dir := seedCheckpoint(t, cached, pod("gone", node))
	// The API server holds a (still bound), not gone (deleted while the
	// node was away), and c (new).
	client := fake.NewClientset(withRV(pod("a", node), "7"), pod("c", node))
	o := newOutage(client)
	o.goDown()
	h := startWith(t, client, Config{NodeName: node, CheckpointDir: dir})
	if o.nextList(t) == nil {
		t.Fatal("first list succeeded while the server was down")
	}
	if h.src.Offline() {
		t.Fatal("Offline() before OfflineAfter passed")
	}
	offline := h.stepUntilSnapshot(DefaultOfflineAfter)
	if got := names(offline); !reflect.DeepEqual(got, []string{"a", "gone"}) {
		t.Fatalf("offline snapshot = %v, want the checkpoint [a gone]", got)
	}
	if offline[0].Status.Phase != corev1.PodRunning || offline[0].UID != "uid-a" {
		t.Fatalf("offline pod a = uid %s phase %q, want the checkpointed uid-a Running", offline[0].UID, offline[0].Status.Phase)
	}
	if !h.src.Offline() {
		t.Fatal("Offline() = false while serving the checkpoint")
	}
	o.comeBack()
	if got := h.next(); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Fatalf("snapshot after the server answered = %v, want its pods [a c]", got)
	}
	if h.src.Offline() {
		t.Fatal("Offline() = true after the server answered")
	}
	if got, want := checkpointFiles(t, dir), []string{"uid-a.json", "uid-c.json"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("checkpoint after the server answered = %v, want %v", got, want)
	}
}

func TestAnsweredFirstListIgnoresTheCheckpoint(t *testing.T) {
	dir := seedCheckpoint(t, pod("old", node))
	client := fake.NewClientset(pod("a", node))
	h := startWith(t, client, Config{NodeName: node, CheckpointDir: dir})
	if got := h.next(); !reflect.DeepEqual(got, []string{"a"}) {
		t.Fatalf("first snapshot = %v, want the server's [a]", got)
	}
	if h.src.Offline() {
		t.Fatal("Offline() = true with the server answering")
	}
	h.clk.Step(DefaultOfflineAfter)
	h.quiet("after OfflineAfter with the server answering")
	if got, want := checkpointFiles(t, dir), []string{"uid-a.json"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("checkpoint = %v, want %v", got, want)
	}
	// Later changes reach the checkpoint too: a deleted pod loses its file.
	if err := client.CoreV1().Pods("default").Delete(context.Background(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := h.flush(); len(got) != 0 {
		t.Fatalf("snapshot after deleting a = %v, want none", got)
	}
	if got := checkpointFiles(t, dir); len(got) != 0 {
		t.Fatalf("checkpoint after deleting a = %v, want none", got)
	}
}

func TestNoCheckpointSendsNothingUntilTheServerAnswers(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{name: "the checkpoint is turned off", cfg: Config{NodeName: node}},
		{name: "the checkpoint was never written", cfg: Config{NodeName: node, CheckpointDir: filepath.Join(t.TempDir(), "never")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(pod("a", node))
			o := newOutage(client)
			o.goDown()
			h := startWith(t, client, tt.cfg)
			o.nextList(t)
			h.clk.Step(time.Minute)
			h.quiet("while the server is down")
			if h.src.Offline() {
				t.Fatal("Offline() = true without a checkpoint")
			}
			o.comeBack()
			if got := h.next(); !reflect.DeepEqual(got, []string{"a"}) {
				t.Fatalf("first snapshot = %v, want [a]", got)
			}
		})
	}
}

func TestConfigRejectsBadCheckpointSettings(t *testing.T) {
	for cfg, want := range map[Config]string{
		{NodeName: node, OfflineAfter: -time.Second}:    "offlineAfter",
		{NodeName: node, CheckpointDir: "relative/dir"}: "absolute",
	} {
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", cfg, err, want)
		}
	}
}
