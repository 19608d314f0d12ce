package file

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// deadline bounds every wait; it is a guard against hangs, not a delay.
const deadline = 10 * time.Second

// checkPeriod is long so that a periodic rescan never happens unless a test
// steps the clock that far on purpose.
const checkPeriod = time.Hour

// harness runs a Source on a fake clock and receives its snapshots.
type harness struct {
	t       *testing.T
	clk     *clocktesting.FakeClock
	lines   *logLines
	path    string
	ch      chan []*corev1.Pod
	base    int           // fake clock waiters while nothing is pending
	stepped time.Duration // how far next stepped the clock
}

func start(t *testing.T, path string) *harness {
	t.Helper()
	log, lines := newLogger()
	h := &harness{
		t: t, clk: clocktesting.NewFakeClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)),
		lines: lines, path: path, ch: make(chan []*corev1.Pod),
	}
	src := New(h.clk, log, Config{Path: path, NodeName: "node", CheckPeriod: checkPeriod})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- src.Run(ctx, h.ch) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("Run() = %v, want nil", err)
			}
		case <-time.After(deadline):
			t.Error("Run did not return after its context ended")
		}
	})
	return h
}

// first receives the first snapshot, sent before any clock step, and
// records the clock's resting number of waiters.
func (h *harness) first() []*corev1.Pod {
	h.t.Helper()
	select {
	case pods := <-h.ch:
		h.base = h.clk.Waiters()
		return pods
	case <-time.After(deadline):
		h.t.Fatal("no first snapshot")
		return nil
	}
}

// next waits for the next snapshot. Whenever the source has armed its
// debounce timer (the fake clock has more waiters than at rest), it steps
// the clock by the debounce delay, and only by that.
func (h *harness) next() []*corev1.Pod {
	h.t.Helper()
	return h.nextStepping(debounceDelay)
}

// nextStepping waits for the next snapshot, stepping the clock by step
// whenever the source has a timer armed besides its rescan ticker.
func (h *harness) nextStepping(step time.Duration) []*corev1.Pod {
	h.t.Helper()
	h.stepped = 0
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		select {
		case pods := <-h.ch:
			return pods
		default:
		}
		if h.clk.Waiters() > h.base {
			h.clk.Step(step)
			h.stepped += step
		}
		runtime.Gosched()
	}
	h.t.Fatal("no snapshot arrived")
	return nil
}

// waitWaiters waits until the fake clock has n waiters.
func (h *harness) waitWaiters(n int) {
	h.t.Helper()
	end := time.Now().Add(deadline)
	for h.clk.Waiters() != n {
		if time.Now().After(end) {
			h.t.Fatalf("the fake clock has %d waiters, want %d", h.clk.Waiters(), n)
		}
		runtime.Gosched()
	}
}

func podNames(pods []*corev1.Pod) string {
	return strings.Join(names(pods), ",")
}

func TestRunFollowsDirectoryChanges(t *testing.T) {
	tmp := t.TempDir()
	writeFile(t, join(tmp, "a.yaml"), manifest("a", "x:1"))
	h := start(t, tmp)
	if got := podNames(h.first()); got != "a-node" {
		t.Fatalf("first snapshot %q, want a-node", got)
	}

	writeFile(t, join(tmp, "b.yaml"), manifest("b", "x:1"))
	created := h.next()
	if got := podNames(created); got != "a-node,b-node" {
		t.Fatalf("after creating b.yaml got %q, want a-node,b-node", got)
	}

	writeFile(t, join(tmp, "b.yaml"), manifest("b", "x:2"))
	edited := h.next()
	if got := podNames(edited); got != "a-node,b-node" || edited[1].UID == created[1].UID {
		t.Fatalf("after editing b.yaml got %q with UID %s, want b-node with a new UID", got, edited[1].UID)
	}

	if err := os.Remove(join(tmp, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	if got := podNames(h.next()); got != "b-node" {
		t.Fatalf("after removing a.yaml got %q, want b-node", got)
	}
	if h.stepped >= checkPeriod {
		t.Fatalf("the clock moved %s, so a rescan, not the watch, saw the change", h.stepped)
	}
}

func TestRunEditorSaveGivesOneSnapshot(t *testing.T) {
	tmp := t.TempDir()
	path := join(tmp, "web.yaml")
	writeFile(t, path, manifest("web", "x:1"))
	h := start(t, tmp)
	old := h.first()

	// As vim does: move the original aside, write the new file.
	if err := os.Rename(path, path+"~"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, manifest("web", "x:2"))
	got := h.next()
	if len(got) != 1 || got[0].UID == old[0].UID {
		t.Fatalf("after the save got %q, want only the new web-node (no snapshot without it)", podNames(got))
	}
}

func TestRunRescanCatchesWhatTheWatchMissed(t *testing.T) {
	tmp, elsewhere := t.TempDir(), t.TempDir()
	target := join(elsewhere, "web.yaml")
	writeFile(t, target, manifest("web", "x:1"))
	if err := os.Symlink(target, join(tmp, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	h := start(t, tmp)
	old := h.first()

	// Writing through the symlink's target raises no event in tmp.
	writeFile(t, target, manifest("web", "x:2"))
	h.clk.Step(checkPeriod)
	select {
	case got := <-h.ch:
		if len(got) != 1 || got[0].UID == old[0].UID {
			t.Fatalf("after the rescan got %q, want the edited web-node", podNames(got))
		}
	case <-time.After(deadline):
		t.Fatal("the periodic rescan sent no snapshot")
	}
}

func TestRunWaitsForMissingDirectory(t *testing.T) {
	path := join(t.TempDir(), "manifests")
	h := start(t, path)
	if pods := h.first(); len(pods) != 0 {
		t.Fatalf("first snapshot %q, want an empty one", podNames(pods))
	}

	// The retry after 1s fails again, and is logged no more; the next
	// comes after 2s.
	h.clk.Step(retryPeriod)
	h.waitWaiters(h.base)
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, join(path, "web.yaml"), manifest("web", "x:1"))
	h.clk.Step(2 * retryPeriod)
	select {
	case got := <-h.ch:
		if podNames(got) != "web-node" {
			t.Fatalf("once the directory exists got %q, want web-node", podNames(got))
		}
	case <-time.After(deadline):
		t.Fatal("no snapshot after the directory appeared and the watch was retried")
	}
	logged := h.lines.drain()
	for _, want := range []string{"Cannot watch static pod directory", "Static pod directory does not exist", "Watching static pod directory"} {
		if n := count(logged, want, quoted(path)); n != 1 {
			t.Errorf("%d log lines with %q and the path, want 1; lines %q", n, want, logged)
		}
	}
}

func TestRunDirectoryRemovedAndRecreated(t *testing.T) {
	path := join(t.TempDir(), "manifests")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, join(path, "web.yaml"), manifest("web", "x:1"))
	h := start(t, path)
	h.first()

	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if got := h.next(); len(got) != 0 {
		t.Fatalf("after removing the directory got %q, want no pods", podNames(got))
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, join(path, "web.yaml"), manifest("web", "x:1"))
	if got := h.nextStepping(retryPeriod); podNames(got) != "web-node" {
		t.Fatalf("after recreating the directory got %q, want web-node", podNames(got))
	}
	if h.stepped >= checkPeriod {
		t.Fatalf("the clock moved %s, so a rescan, not the watch retry, saw the directory", h.stepped)
	}
}

func TestRunRejectsInvalidConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"A config without path is rejected.", Config{NodeName: "n"}, "path is required"},
		{"A config without node name is rejected.", Config{Path: "/m"}, "nodeName is required"},
		{"A negative check period is rejected.", Config{Path: "/m", NodeName: "n", CheckPeriod: -time.Second}, "must not be negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := New(clocktesting.NewFakeClock(time.Now()), logrDiscard(), tc.cfg)
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			err := src.Run(ctx, make(chan []*corev1.Pod))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestRunSendsAnEditThatKeepsAFixedUID(t *testing.T) {
	tmp := t.TempDir()
	fixed := func(image string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  uid: fixed-uid\nspec:\n  containers:\n  - name: c\n    image: " + image + "\n"
	}
	writeFile(t, join(tmp, "a.yaml"), fixed("x:1"))
	h := start(t, tmp)
	if first := h.first(); len(first) != 1 || first[0].UID != "fixed-uid" {
		t.Fatalf("first snapshot %+v, want the pod with its own UID", first)
	}
	writeFile(t, join(tmp, "a.yaml"), fixed("x:2"))
	edited := h.next()
	if len(edited) != 1 || edited[0].UID != "fixed-uid" || edited[0].Spec.Containers[0].Image != "x:2" {
		t.Fatalf("after the edit got %+v, want the same UID with the new image", edited)
	}
}
