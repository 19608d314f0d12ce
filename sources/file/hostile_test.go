package file

import (
	"strings"
	"testing"
)

// withMeta is manifest("web", "nginx:1") with extra metadata lines.
func withMeta(meta string) string {
	return strings.Replace(manifest("web", "nginx:1"), "  name: web\n", "  name: web\n"+meta, 1)
}

func TestScanRefusesAUIDOrNamespaceThatIsNotOnePathElement(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ meta, field string }{
		{"  uid: x/../../../somewhere\n", "metadata.uid"},
		{"  uid: ..\n", "metadata.uid"},
		{"  uid: \"a\\0b\"\n", "metadata.uid"},
		{"  namespace: ..\n", "metadata.namespace"},
		{"  namespace: a/b\n", "metadata.namespace"},
	} {
		tmp := t.TempDir()
		evil := join(tmp, "evil.yaml")
		writeFile(t, join(tmp, "good.yaml"), manifest("good", "nginx:1"))
		writeFile(t, evil, withMeta(c.meta))
		log, lines := newLogger()
		pods := scanOK(t, newDir(tmp, "n", log))
		if len(pods) != 1 || pods[0].Name != "good-n" {
			t.Errorf("%s: pods %v, want only good-n", c.meta, names(pods))
		}
		if got := lines.drain(); count(got, `"Could not read pod manifest"`, quoted(evil), c.field+": ") != 1 {
			t.Errorf("%s: log lines %q, want one error naming %s and %s", c.meta, got, evil, c.field)
		}
	}
}
