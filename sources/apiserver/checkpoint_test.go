package apiserver

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func checkpointFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

func TestCheckpointSavesOnlyTheGivenPods(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pod-checkpoints")
	c := newCheckpoint(dir, logr.Discard())
	if err := c.save([]*corev1.Pod{pod("a", node), pod("b", node), mirror(pod("static-node1", node))}); err != nil {
		t.Fatal(err)
	}
	if got, want := checkpointFiles(t, dir), []string{"uid-a.json", "uid-b.json"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("files after the first save = %v, want %v (mirror pods are not checkpointed)", got, want)
	}
	// A leftover of a crash during a write goes with the next save.
	if err := os.WriteFile(filepath.Join(dir, ".uid-c.123.tmp"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.save([]*corev1.Pod{pod("b", node)}); err != nil {
		t.Fatal(err)
	}
	if got, want := checkpointFiles(t, dir), []string{"uid-b.json"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("files after a save without a = %v, want %v", got, want)
	}
	if err := c.save(nil); err != nil {
		t.Fatal(err)
	}
	if got := checkpointFiles(t, dir); len(got) != 0 {
		t.Fatalf("files after an empty save = %v, want none (and the directory kept)", got)
	}
}

func TestCheckpointWritesOnlyChangedPods(t *testing.T) {
	dir := t.TempDir()
	c := newCheckpoint(dir, logr.Discard())
	if err := c.save([]*corev1.Pod{withRV(pod("a", node), "1")}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "uid-a.json")
	// A file changed behind the checkpoint's back stays as it is while the
	// pod does not change: proof that it is not written again.
	if err := os.WriteFile(file, []byte("marker"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.save([]*corev1.Pod{withRV(pod("a", node), "1")}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != "marker" {
		t.Fatalf("unchanged pod was written again: %q", b)
	}
	if err := c.save([]*corev1.Pod{withRV(pod("a", node), "2")}); err != nil {
		t.Fatal(err)
	}
	got, _, err := newCheckpoint(dir, logr.Discard()).load()
	if err != nil || len(got) != 1 || got[0].ResourceVersion != "2" {
		t.Fatalf("load after a change = %v, %v; want pod a at resource version 2", got, err)
	}
}

func TestCheckpointLoad(t *testing.T) {
	t.Run("no directory means never listed", func(t *testing.T) {
		pods, found, err := newCheckpoint(filepath.Join(t.TempDir(), "absent"), logr.Discard()).load()
		if err != nil || found || pods != nil {
			t.Fatalf("load() = %v, %v, %v; want nothing, not found", pods, found, err)
		}
	})
	t.Run("an empty directory is an empty checkpoint", func(t *testing.T) {
		pods, found, err := newCheckpoint(t.TempDir(), logr.Discard()).load()
		if err != nil || !found || len(pods) != 0 {
			t.Fatalf("load() = %v, %v, %v; want no pods, found", pods, found, err)
		}
	})
	t.Run("broken, misnamed and temporary files are skipped", func(t *testing.T) {
		dir := t.TempDir()
		c := newCheckpoint(dir, logr.Discard())
		a := pod("a", node)
		a.Status.Phase = corev1.PodRunning
		if err := c.save([]*corev1.Pod{a, pod("b", node)}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "uid-b.json"))
		for name, content := range map[string][]byte{
			"uid-x.json":      []byte("{not json"),
			"uid-y.json":      b, // holds pod b: not the pod of its name
			".uid-z.1.tmp":    b,
			"notes.txt":       []byte("hello"),
			"uid-../../.json": b,
		} {
			_ = os.WriteFile(filepath.Join(dir, name), content, 0o600)
		}
		pods, found, err := newCheckpoint(dir, logr.Discard()).load()
		if err != nil || !found {
			t.Fatalf("load() error %v found %v", err, found)
		}
		if got := names(pods); !reflect.DeepEqual(got, []string{"a", "b"}) {
			t.Fatalf("loaded pods = %v, want [a b]", got)
		}
		if pods[0].Status.Phase != corev1.PodRunning {
			t.Fatalf("loaded status = %q, want the saved Running", pods[0].Status.Phase)
		}
	})
}

func TestCheckpointRefusesUIDsThatAreNoFileNames(t *testing.T) {
	for _, uid := range []types.UID{"", "../x", "a/b", ".hidden"} {
		p := pod("a", node)
		p.UID = uid
		if checkpointed(p) {
			t.Errorf("checkpointed(UID %q) = true, want false", uid)
		}
	}
}
