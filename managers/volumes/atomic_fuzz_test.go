package volumes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzAtomicWriterPaths checks that item paths from the API never write
// outside the volume: a path the writer accepts lands inside dir.
func FuzzAtomicWriterPaths(f *testing.F) {
	for _, seed := range []string{"a", "a/b", "../x", "/etc/passwd", "..data", "a/../../b", "./a", "a//b", ".."} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if strings.ContainsRune(p, 0) {
			return
		}
		parent := t.TempDir()
		dir := filepath.Join(parent, "vol")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := writeAtomic(dir, map[string]File{p: {Data: []byte("x"), Mode: 0o644}}, t0); err != nil {
			return
		}
		es, err := os.ReadDir(parent)
		if err != nil || len(es) != 1 {
			t.Fatalf("path %q wrote beside the volume: %v", p, es)
		}
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil || string(b) != "x" {
			t.Fatalf("path %q: read back %q, %v", p, b, err)
		}
	})
}
