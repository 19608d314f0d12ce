//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodekit/nodekit"
)

// TestNodeAPIKubectlLogsFollowSurvivesRotation is issue 13's acceptance 1,
// "-f survives a rotation": a container writes numbered lines steadily, the
// log is rotated (MaxSize 16Ki, checked every 3 s) three times while
// `kubectl logs -f` follows, and the follow delivers every line in order,
// none twice, including lines written after the rotations.
func TestNodeAPIKubectlLogsFollowSurvivesRotation(t *testing.T) {
	c := loadCluster(t)
	if c.kubectl == "" {
		t.Skip("no kubectl in the control-plane env (NODEKIT_KUBECTL)")
	}
	h := newAgentHarness(t)
	h.configure = func(cfg *nodekit.Config) {
		cfg.Logs.MaxSize, cfg.Logs.MaxFiles, cfg.Logs.MonitorInterval = "16Ki", 3, 3*time.Second
	}
	ns := h.joinCluster(c)
	h.start()
	// About 2.5 KiB/s: a 16 KiB file is rotated every 6-9 s.
	pod := h.shPod(ns, "seq", `trap 'exit 0' TERM; pad=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
i=0; while true; do echo "line-$i $pad"; i=$((i+1)); sleep 0.04; done`)
	created, err := c.admin.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitAPIPod(t, c, ns, "seq", settle, "running", apiRunning)
	dir := filepath.Join(h.rootDir, "logs", ns+"_seq_"+string(created.UID), "main")

	f := c.start(t, nil, "-n", ns, "logs", "seq", "-f")
	base := -1                // the rotations done when the follow started
	seen := map[string]bool{} // rotated files by name, without .gz
	rotations := func() int {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if name := strings.TrimSuffix(strings.TrimSuffix(e.Name(), ".tmp"), ".gz"); name != "0.log" {
				seen[name] = true
			}
		}
		return len(seen)
	}
	const wantRotations = 3
	next := -1
	var afterRotation int // the first line number read once a rotation was seen
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		l := f.next(t, 30*time.Second)
		word, _, _ := strings.Cut(l, " ")
		n, ok := lineNumberOK(word)
		if !ok {
			t.Fatalf("unexpected log line %q", l)
		}
		switch {
		case next == -1:
			// The follow starts at the current file's first line: line-0
			// unless a rotation came first.
			t.Logf("-f started at line %d", n)
		case n < next:
			t.Fatalf("-f delivered line %d twice (or out of order) after line %d", n, next-1)
		case n > next:
			t.Fatalf("-f lost lines %d to %d (rotated files: %d)", next, n-1, rotations())
		}
		next = n + 1
		if base == -1 {
			base = rotations()
		}
		if afterRotation == 0 && rotations() >= base+wantRotations {
			// Three rotations during the follow: lines from here on were
			// written to at least the fourth file it read.
			afterRotation = n + 1
			t.Logf("%d rotations during the follow seen at line %d", wantRotations, n)
		}
		if afterRotation > 0 && n >= afterRotation+300 {
			t.Logf("followed %d lines, %d after the last of %d rotations", n+1, n-afterRotation+1, rotations()-base)
			return
		}
	}
	t.Fatalf("no three rotations and 300 more lines within 3 minutes (at line %d, afterRotation %d, rotated files %d)", next-1, afterRotation, rotations())
}
