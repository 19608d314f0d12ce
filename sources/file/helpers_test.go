package file

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// logLines collects log lines, formatted by funcr, for assertions.
type logLines struct {
	ch chan string
}

// newLogger returns a logger at verbosity 0 whose lines go to the result.
func newLogger() (logr.Logger, *logLines) {
	l := &logLines{ch: make(chan string, 10000)}
	return funcr.New(func(prefix, args string) {
		select {
		case l.ch <- prefix + " " + args:
		default:
		}
	}, funcr.Options{}), l
}

// drain returns the lines logged so far.
func (l *logLines) drain() []string {
	var out []string
	for {
		select {
		case s := <-l.ch:
			out = append(out, s)
		default:
			return out
		}
	}
}

// count returns how many of lines contain every one of substrs.
func count(lines []string, substrs ...string) int {
	n := 0
	for _, line := range lines {
		all := true
		for _, s := range substrs {
			all = all && strings.Contains(line, s)
		}
		if all {
			n++
		}
	}
	return n
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// manifest is a valid pod manifest named name running image.
func manifest(name, image string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
		"\nspec:\n  containers:\n  - name: main\n    image: " + image + "\n"
}

// quoted is how funcr renders a string value.
func quoted(s string) string { return `"` + s + `"` }

func join(elem ...string) string { return filepath.Join(elem...) }

func logrDiscard() logr.Logger { return logr.Discard() }
