package file

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func names(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

func scanOK(t *testing.T, d *dir) []*corev1.Pod {
	t.Helper()
	pods, ok := d.scan()
	if !ok {
		t.Fatal("scan() could not read the directory")
	}
	return pods
}

func TestScanBrokenFileBesideGoodOne(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	writeFile(t, join(tmp, "good.yaml"), manifest("good", "nginx:1"))
	writeFile(t, join(tmp, "broken.yaml"), "metadata: [\n")
	log, lines := newLogger()
	d := newDir(tmp, "n", log)

	pods := scanOK(t, d)
	if got := names(pods); len(got) != 1 || got[0] != "good-n" {
		t.Fatalf("pods = %v, want [good-n]", got)
	}
	logged := lines.drain()
	if count(logged, `"Could not read pod manifest"`, `"file"=`+quoted(join(tmp, "broken.yaml")), "YAML") != 1 {
		t.Fatalf("log lines %q: want one error naming broken.yaml and the cause", logged)
	}
	scanOK(t, d)
	if again := lines.drain(); len(again) != 0 {
		t.Fatalf("a rescan of unchanged files logged %q again", again)
	}
}

func TestScanBrokenEditKeepsLastGoodPod(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	path := join(tmp, "web.yaml")
	writeFile(t, path, manifest("web", "nginx:1"))
	log, lines := newLogger()
	d := newDir(tmp, "n", log)
	first := scanOK(t, d)

	writeFile(t, path, manifest("web", "nginx:2")+"  containers: oops\n")
	kept := scanOK(t, d)
	if len(kept) != 1 || kept[0].UID != first[0].UID {
		t.Fatalf("after a broken edit got %v, want the last good pod %s", names(kept), first[0].UID)
	}
	if got := lines.drain(); count(got, `"Could not read pod manifest"`, quoted(path)) != 1 ||
		count(got, `"Keeping the last good version of the static pod"`, quoted(path)) != 1 {
		t.Fatalf("log lines %q: want the error and the keep notice", got)
	}

	writeFile(t, path, manifest("web", "nginx:2"))
	fixed := scanOK(t, d)
	if len(fixed) != 1 || fixed[0].UID == first[0].UID || fixed[0].Spec.Containers[0].Image != "nginx:2" {
		t.Fatalf("after the fix got %v, want the new pod", fixed)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if gone := scanOK(t, d); len(gone) != 0 {
		t.Fatalf("after removing the file got %v, want no pods", names(gone))
	}
}

func TestScanSkipsWhatIsNotAManifest(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	writeFile(t, join(tmp, "a.yaml"), manifest("a", "x:1"))
	writeFile(t, join(tmp, "b.yml"), manifest("b", "x:1"))
	writeFile(t, join(tmp, "c.json"), `{"metadata":{"name":"c"},"spec":{"containers":[{"name":"m","image":"x:1"}]}}`)
	writeFile(t, join(tmp, ".hidden.yaml"), manifest("hidden", "x:1"))
	writeFile(t, join(tmp, "notes.txt"), manifest("txt", "x:1"))
	writeFile(t, join(tmp, "a.yaml.swp"), manifest("swp", "x:1"))
	if err := os.Mkdir(join(tmp, "sub.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, join(tmp, "sub.yaml", "d.yaml"), manifest("d", "x:1"))
	if err := os.Symlink(join(tmp, "a.yaml"), join(tmp, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, join(tmp, "link-target"), manifest("linked", "x:1"))
	if err := os.Symlink(join(tmp, "link-target"), join(tmp, "z.yaml")); err != nil {
		t.Fatal(err)
	}
	d := newDir(tmp, "n", logrDiscard())
	got := names(scanOK(t, d))
	// link.yaml gives a second pod named like a.yaml's: it is skipped.
	want := []string{"a-n", "b-n", "c-n", "linked-n"}
	if len(got) != len(want) {
		t.Fatalf("pods = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pods = %v, want %v", got, want)
		}
	}
}

func TestScanMissingDirectoryIsEmpty(t *testing.T) {
	t.Parallel()
	path := join(t.TempDir(), "manifests")
	log, lines := newLogger()
	d := newDir(path, "n", log)
	for range 2 {
		if pods := scanOK(t, d); pods == nil || len(pods) != 0 {
			t.Fatalf("scan() = %v, want an empty, non-nil snapshot", pods)
		}
	}
	if got := lines.drain(); count(got, "does not exist", quoted(path)) != 1 || len(got) != 1 {
		t.Fatalf("log lines %q: want one line naming the missing path", got)
	}
}
