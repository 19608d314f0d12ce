package volumes

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// entries lists dir's names, sorted.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

func mustWrite(t *testing.T, dir string, payload map[string]File, now time.Time) bool {
	t.Helper()
	wrote, err := writeAtomic(dir, payload, now)
	if err != nil {
		t.Fatalf("writeAtomic: %v", err)
	}
	return wrote
}

func TestAtomicWriterLaysOutTheKubeletsSymlinks(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, map[string]File{
		"a":       {Data: []byte("one"), Mode: 0o644},
		"sub/b":   {Data: []byte("two"), Mode: 0o400},
		"sub/c/d": {Data: []byte("three"), Mode: 0o600},
	}, t0)
	names := entries(t, dir)
	if len(names) != 4 || names[0] != "..2026_12_01_09_00_00."+strings.TrimPrefix(names[0], "..2026_12_01_09_00_00.") ||
		names[1] != "..data" || names[2] != "a" || names[3] != "sub" {
		t.Fatalf("entries %q, want a timestamped directory, ..data, a and sub", names)
	}
	if target, _ := os.Readlink(filepath.Join(dir, "..data")); target != names[0] {
		t.Errorf("..data -> %q, want %q", target, names[0])
	}
	for link, want := range map[string]string{"a": "..data/a", "sub": "..data/sub"} {
		if target, err := os.Readlink(filepath.Join(dir, link)); err != nil || target != want {
			t.Errorf("%s -> %q (%v), want %q", link, target, err, want)
		}
	}
	for p, want := range map[string]string{"a": "one", "sub/b": "two", "sub/c/d": "three"} {
		if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != want {
			t.Errorf("%s = %q (%v), want %q", p, b, err, want)
		}
	}
	if info, _ := os.Stat(filepath.Join(dir, "sub/b")); info.Mode().Perm() != 0o400 {
		t.Errorf("sub/b mode %v, want 0400 exactly (no umask)", info.Mode().Perm())
	}
}

func TestAtomicWriterSwapsVersionsAndRemovesWhatIsGone(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, map[string]File{"a": {Data: []byte("v1"), Mode: 0o644}, "gone": {Data: []byte("x"), Mode: 0o644}}, t0)
	oldTs, _ := os.Readlink(filepath.Join(dir, "..data"))
	// A reader that opened the old version (as a subPath bind mount holds
	// the old file) keeps reading it whole.
	held, err := os.Open(filepath.Join(dir, oldTs, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if wrote := mustWrite(t, dir, map[string]File{"a": {Data: []byte("v1"), Mode: 0o644}, "gone": {Data: []byte("x"), Mode: 0o644}}, t0.Add(time.Second)); wrote {
		t.Fatal("an unchanged payload was written again")
	}
	if !mustWrite(t, dir, map[string]File{"a": {Data: []byte("v2"), Mode: 0o644}}, t0.Add(2*time.Second)) {
		t.Fatal("a changed payload was not written")
	}
	newTs, _ := os.Readlink(filepath.Join(dir, "..data"))
	if newTs == oldTs || !strings.HasPrefix(newTs, "..2026_12_01_09_00_02.") {
		t.Fatalf("..data -> %q after the update (was %q)", newTs, oldTs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a")); string(b) != "v2" {
		t.Errorf("a = %q, want v2", b)
	}
	if names := entries(t, dir); strings.Join(names, ",") != newTs+",..data,a" {
		t.Errorf("entries %q: want the old version and the removed key gone", names)
	}
	buf := make([]byte, 8)
	if n, _ := held.Read(buf); string(buf[:n]) != "v1" {
		t.Errorf("a reader of the old version read %q, want v1", buf[:n])
	}
}

func TestAtomicWriterRewritesOnAModeChange(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, map[string]File{"a": {Data: []byte("v"), Mode: 0o644}}, t0)
	if !mustWrite(t, dir, map[string]File{"a": {Data: []byte("v"), Mode: 0o400}}, t0.Add(time.Second)) {
		t.Fatal("a mode change was not written")
	}
	if info, _ := os.Stat(filepath.Join(dir, "a")); info.Mode().Perm() != 0o400 {
		t.Errorf("mode %v, want 0400", info.Mode().Perm())
	}
}

func TestAtomicWriterEmptyPayloadLeavesOnlyData(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, map[string]File{"a": {Data: []byte("v"), Mode: 0o644}}, t0)
	mustWrite(t, dir, map[string]File{}, t0.Add(time.Second))
	if names := entries(t, dir); len(names) != 2 || names[1] != "..data" {
		t.Fatalf("entries %q, want an empty version and ..data", names)
	}
}

func TestAtomicWriterRefusesBadPaths(t *testing.T) {
	for _, p := range []string{"", "/abs", "../up", "..hidden", "a/../../b", strings.Repeat("x", 256)} {
		t.Run(p, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := writeAtomic(dir, map[string]File{p: {Data: []byte("x"), Mode: 0o644}}, t0); err == nil {
				t.Fatalf("path %q was accepted", p)
			}
			if names := entries(t, dir); len(names) != 0 {
				t.Fatalf("a refused payload left %q", names)
			}
		})
	}
}

func TestAtomicWriterLeavesForeignFilesAlone(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, dir, map[string]File{"a": {Data: []byte("v"), Mode: 0o644}}, t0)
	if _, err := os.Stat(filepath.Join(dir, "mine")); err != nil {
		t.Fatalf("a file the writer did not make was removed: %v", err)
	}
}
