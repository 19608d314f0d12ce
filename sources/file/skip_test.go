package file

import (
	"os"
	"strings"
	"testing"
)

// skipLines are the log lines that report a skipped entry named path.
func skipLines(lines []string, path string) int {
	return count(lines, `"Skipping entry of the static pod directory"`, `"file"=`+quoted(path))
}

func TestScanLogsEachSkippedEntryOncePerChange(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	writeFile(t, join(tmp, "a.yaml"), manifest("a", "x:1"))
	loop := join(tmp, "loop.yaml")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	dirYAML := join(tmp, "sub.yaml")
	if err := os.Mkdir(dirYAML, 0o755); err != nil {
		t.Fatal(err)
	}
	dangling := join(tmp, "dangling.yaml")
	if err := os.Symlink(join(tmp, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	dup := join(tmp, "b.yaml") // names its pod "a", like a.yaml
	writeFile(t, dup, manifest("a", "x:2"))
	log, lines := newLogger()
	d := newDir(tmp, "n", log)

	if got := names(scanOK(t, d)); len(got) != 1 || got[0] != "a-n" {
		t.Fatalf("pods = %v, want [a-n]", got)
	}
	first := lines.drain()
	for _, c := range []struct{ path, reason string }{
		{loop, "too many levels of symbolic links"},
		{dirYAML, "a directory"},
		{dangling, "dangling symlink"},
		{dup, "duplicate pod name default/a-n: " + join(tmp, "a.yaml")},
	} {
		if n := skipLines(first, c.path); n != 1 || count(first, quoted(c.path), c.reason) != 1 {
			t.Errorf("log lines %q: want one line skipping %s because %q, got %d", first, c.path, c.reason, n)
		}
	}
	for range 3 { // periodic rescans of an unchanged directory
		scanOK(t, d)
	}
	if again := lines.drain(); len(again) != 0 {
		t.Fatalf("rescans of an unchanged directory logged %q", again)
	}

	// A change is logged once more: the duplicate now clashes by UID-less
	// rename, then goes away and comes back.
	writeFile(t, dup, manifest("b", "x:2"))
	if got := names(scanOK(t, d)); len(got) != 2 {
		t.Fatalf("after renaming the duplicate pods = %v, want a-n and b-n", got)
	}
	writeFile(t, dup, manifest("a", "x:3"))
	scanOK(t, d)
	scanOK(t, d)
	if got := lines.drain(); skipLines(got, dup) != 1 {
		t.Fatalf("log lines %q: want the duplicate logged once when it comes back", got)
	}
}

func TestScanLogsTheDocumentsItIgnores(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	path := join(tmp, "multi.yaml")
	writeFile(t, path, manifest("a", "x:1")+"---\n# just a comment\n---\n"+manifest("b", "x:1")+"---\n"+manifest("c", "x:1"))
	log, lines := newLogger()
	d := newDir(tmp, "n", log)
	if got := names(scanOK(t, d)); len(got) != 1 || got[0] != "a-n" {
		t.Fatalf("pods = %v, want only the first document's a-n", got)
	}
	scanOK(t, d)
	got := lines.drain()
	if count(got, "second and later documents", quoted(path), `"skippedDocuments"=2`) != 1 {
		t.Fatalf("log lines %q: want one line naming the file and its 2 ignored documents", got)
	}
	writeFile(t, path, "---\n"+manifest("a", "x:1")+"---\n")
	scanOK(t, d)
	if got := lines.drain(); count(got, "second and later documents") != 0 {
		t.Fatalf("log lines %q: a leading or trailing separator is not a second document", got)
	}
}

func TestScanRefusesManifestsOf10MiBUnread(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	big := join(tmp, "big.yaml")
	writeFile(t, join(tmp, "small.yaml"), manifest("small", "x:1"))
	writeFile(t, big, manifest("big", "x:1"))
	log, lines := newLogger()
	d := newDir(tmp, "n", log)
	if got := names(scanOK(t, d)); len(got) != 2 {
		t.Fatalf("pods = %v, want big-n and small-n", got)
	}
	good := scanOK(t, d)[0]

	// The kubelet reads at most 10 MiB less one byte.
	writeFile(t, big, manifest("big", "x:2")+"# "+strings.Repeat("x", maxManifestSize)+"\n")
	pods := scanOK(t, d)
	if got := names(pods); len(got) != 2 || pods[0].UID != good.UID {
		t.Fatalf("pods = %v, want the last good big-n (%s) kept beside small-n", got, good.UID)
	}
	scanOK(t, d)
	logged := lines.drain()
	if count(logged, `"Could not read pod manifest"`, quoted(big), "10485760 bytes (10 MiB) or more are refused") != 1 {
		t.Fatalf("log lines %q: want one error naming the file and the limit", logged)
	}
	if count(logged, quoted(join(tmp, "small.yaml"))) != 0 {
		t.Fatalf("log lines %q: the small manifest beside it must not be disturbed", logged)
	}

}

func TestReadAtMostStopsAtTheLimit(t *testing.T) {
	t.Parallel()
	path := join(t.TempDir(), "m.yaml")
	for _, c := range []struct {
		size    int
		tooLong bool
	}{{99, false}, {100, true}, {5000, true}} {
		writeFile(t, path, strings.Repeat("x", c.size))
		data, err := readAtMost(path, 100)
		if (err == errTooLarge) != c.tooLong || len(data) > 100 {
			t.Errorf("readAtMost(%d bytes, 100) = %d bytes, %v; want too large: %t, at most 100 bytes", c.size, len(data), err, c.tooLong)
		}
	}
}

func TestScanRefusesWhatTheAPIServerWouldRefuse(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	path := join(tmp, "web.yaml")
	writeFile(t, path, manifest("web", "x:1"))
	writeFile(t, join(tmp, "other.yaml"), manifest("other", "x:1"))
	log, lines := newLogger()
	d := newDir(tmp, "n", log)
	before := scanOK(t, d)
	for _, c := range []struct{ edit, field string }{
		{"  terminationGracePeriodSeconds: -1\n", "spec.terminationGracePeriodSeconds"},
		{"  volumes:\n  - name: v\n    emptyDir: {}\n    hostPath: {path: /x}\n", "spec.volumes[0]"},
		{"    ports:\n    - containerPort: 70000\n", "spec.containers[0].ports[0].containerPort"},
	} {
		writeFile(t, path, manifest("web", "x:2")+c.edit)
		pods := scanOK(t, d)
		if len(pods) != 2 || pods[0].UID != before[0].UID || pods[1].UID != before[1].UID {
			t.Fatalf("%s: pods %v, want both pods as they were", c.field, names(pods))
		}
		got := lines.drain()
		if count(got, `"Could not read pod manifest"`, quoted(path), "invalid pod manifest: pod default/web-n: "+c.field+": ") != 1 {
			t.Fatalf("log lines %q: want one error naming %s and the field %s", got, path, c.field)
		}
	}
}
