package apiserver

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/sources"
)

// fileName reports whether s can be created as one file in a directory.
func fileName(s string) bool {
	return s != "" && s != "." && s != ".." && len(s) <= 200 && !strings.ContainsAny(s, "/\x00")
}

// encodePods is the JSON of each pod, one per line.
func encodePods(t *testing.T, pods []*corev1.Pod) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, p := range pods {
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("encode loaded pod %s: %v", p.UID, err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// FuzzPodCheckpoint writes arbitrary bytes under an arbitrary file name
// into a pod checkpoint beside a good pod's file, and loads it as the API
// source does at start. No panic; the good pod is always loaded; every
// pod loaded is no mirror pod, has a UID that is a single path element
// not starting with "." and is the file's name; saving what was loaded
// keeps every file and loads back to the same JSON, and saving that again
// changes nothing.
func FuzzPodCheckpoint(f *testing.F) {
	good := pod("good", node)
	goodJSON, _ := json.Marshal(good)
	running := pod("web", node)
	running.Status.Phase = corev1.PodRunning
	running.CreationTimestamp.Time = running.CreationTimestamp.Add(1)
	webJSON, _ := json.Marshal(running)
	mirror := pod("mirror", node)
	mirror.Annotations = map[string]string{sources.AnnotationMirror: "abc"}
	mirrorJSON, _ := json.Marshal(mirror)
	f.Add("uid-web.json", webJSON)
	f.Add("uid-other.json", webJSON)
	f.Add("uid-mirror.json", mirrorJSON)
	f.Add(".uid-web.json", webJSON)
	f.Add("uid-web.json.tmp", webJSON)
	f.Add("x.json", []byte(`{"metadata":{"uid":"x","creationTimestamp":"2026-12-05T10:11:12.5+02:00"},"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1000m","memory":"0.5Gi"}}}]}}`))
	f.Add("...json", []byte(`{"metadata":{"uid":".."}}`))
	f.Add("a\\b.json", []byte(`{"metadata":{"uid":"a\\b"}}`))
	f.Add("u.json", []byte(`{"metadata":{"uid":"u"},"spec":{"containers":null},"status":{"phase":"Running"}}`))
	f.Add("u.json", []byte(`{"metadata":{"uid":"u","uid":"v"}}`))
	f.Add("u.json", []byte(`{not json`))
	f.Add("u.json", []byte(`null`))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if !fileName(name) || name == "uid-good.json" {
			t.Skip()
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "uid-good.json"), goodJSON, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Skip() // a name the file system refuses
		}
		c := newCheckpoint(dir, logr.Discard())
		pods, found, err := c.load()
		if err != nil || !found {
			t.Fatalf("load() found %v, error %v", found, err)
		}
		goodSeen := false
		for _, p := range pods {
			uid := string(p.UID)
			if uid == "" || uid != filepath.Base(uid) || strings.HasPrefix(uid, ".") || strings.ContainsAny(uid, "/\\\x00") {
				t.Fatalf("loaded a pod whose UID %q is not a single path element", uid)
			}
			if _, mirror := p.Annotations[sources.AnnotationMirror]; mirror {
				t.Fatalf("loaded mirror pod %s", uid)
			}
			if _, err := os.Stat(filepath.Join(dir, uid+checkpointSuffix)); err != nil {
				t.Fatalf("loaded pod %s has no file of its name: %v", uid, err)
			}
			goodSeen = goodSeen || uid == "uid-good"
		}
		if !goodSeen {
			t.Fatalf("the good pod was not loaded beside %q", name)
		}
		first := encodePods(t, pods)
		if err := c.save(pods); err != nil {
			t.Fatalf("save what was loaded: %v", err)
		}
		again, _, err := newCheckpoint(dir, logr.Discard()).load()
		if err != nil {
			t.Fatal(err)
		}
		if got := encodePods(t, again); !bytes.Equal(got, first) {
			t.Fatalf("saved and loaded again:\n%s\nwant what was loaded:\n%s", got, first)
		}
		before := checkpointFiles(t, dir)
		if err := c.save(again); err != nil {
			t.Fatalf("save again: %v", err)
		}
		third, _, _ := newCheckpoint(dir, logr.Discard()).load()
		if got := encodePods(t, third); !bytes.Equal(got, first) || strings.Join(checkpointFiles(t, dir), "/") != strings.Join(before, "/") {
			t.Fatalf("a second save changed the checkpoint")
		}
	})
}
