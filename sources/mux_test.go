package sources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// deadline bounds every wait on a channel; it is a guard, not a delay.
const deadline = 10 * time.Second

// fakeSource sends the snapshots written to snaps; if fail is set it returns
// that error at once instead.
type fakeSource struct {
	name  string
	snaps chan []*corev1.Pod
	fail  error
}

func newFakeSource(name string) *fakeSource {
	return &fakeSource{name: name, snaps: make(chan []*corev1.Pod)}
}

func (f *fakeSource) Name() string { return f.name }

func (f *fakeSource) Run(ctx context.Context, out chan<- []*corev1.Pod) error {
	if f.fail != nil {
		return f.fail
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case s := <-f.snaps:
			select {
			case out <- s:
			case <-ctx.Done():
				return nil
			}
		}
	}
}

// send hands one snapshot to the source's Run.
func (f *fakeSource) send(t *testing.T, pods ...*corev1.Pod) {
	t.Helper()
	select {
	case f.snaps <- pods:
	case <-time.After(deadline):
		t.Fatalf("source %s: nobody took the snapshot", f.name)
	}
}

// lineLogger returns a logger whose lines go to the returned channel.
func lineLogger() (logr.Logger, <-chan string) {
	lines := make(chan string, 1000)
	log := funcr.New(func(prefix, args string) {
		select {
		case lines <- prefix + " " + args:
		default:
		}
	}, funcr.Options{Verbosity: 4})
	return log, lines
}

// startMux runs m until the test ends and checks that Run returns nil.
func startMux(t *testing.T, m *Mux) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("Run returned %v, want nil", err)
			}
		case <-time.After(deadline):
			t.Errorf("Run did not return after its context ended")
		}
	})
}

func receive(t *testing.T, m *Mux) string {
	t.Helper()
	select {
	case u := <-m.Updates():
		return strings.Join(describe([]PodUpdate{u}), "")
	case <-time.After(deadline):
		t.Fatal("no update arrived")
		return ""
	}
}

func TestMuxSeenSources(t *testing.T) {
	a, b := newFakeSource("file"), newFakeSource("api")
	m := NewMux([]Source{a, b}, clocktesting.NewFakeClock(epoch), logr.Discard())
	if got := m.Sources(); strings.Join(got, ",") != "file,api" {
		t.Fatalf("Sources() = %v, want [file api]", got)
	}
	if m.Updates() != m.Updates() {
		t.Fatal("Updates() returned a different channel on a second call")
	}
	startMux(t, m)

	a.send(t) // empty first snapshot: seen, nothing emitted
	a.send(t, pod("a1"))
	if got := receive(t, m); got != "ADD file: a1" {
		t.Fatalf("got %q, want ADD file: a1 (an empty first snapshot must emit nothing)", got)
	}
	if !m.SeenSource("file") || m.SeenSource("api") || m.SeenAllSources() {
		t.Fatalf("after file's snapshots: SeenSource(file)=%v SeenSource(api)=%v SeenAllSources=%v, want true false false",
			m.SeenSource("file"), m.SeenSource("api"), m.SeenAllSources())
	}
	b.send(t, pod("b1"))
	if got := receive(t, m); got != "ADD api: b1" {
		t.Fatalf("got %q, want ADD api: b1", got)
	}
	// Snapshots are merged one at a time, so once the next one's update
	// arrives the previous source is marked seen.
	a.send(t)
	if got := receive(t, m); got != "REMOVE file: a1" {
		t.Fatalf("got %q, want REMOVE file: a1", got)
	}
	if !m.SeenAllSources() {
		t.Fatal("SeenAllSources() = false after both sources sent snapshots")
	}
}

func TestMuxWithoutSourcesHasSeenAll(t *testing.T) {
	m := NewMux(nil, clocktesting.NewFakeClock(epoch), logr.Discard())
	if !m.SeenAllSources() {
		t.Fatal("SeenAllSources() = false with no sources")
	}
}

func TestMuxFailingSourceDoesNotStopOthers(t *testing.T) {
	log, lines := lineLogger()
	bad := newFakeSource("http")
	bad.fail = errors.New("cannot reach manifest URL")
	good := newFakeSource("file")
	m := NewMux([]Source{bad, good}, clocktesting.NewFakeClock(epoch), log)
	startMux(t, m)

	waitLine(t, lines, "cannot reach manifest URL")
	good.send(t, pod("a"))
	if got := receive(t, m); got != "ADD file: a" {
		t.Fatalf("got %q, want ADD file: a", got)
	}
	if m.SeenAllSources() {
		t.Fatal("SeenAllSources() = true although the failed source never sent a snapshot")
	}
}

func waitLine(t *testing.T, lines <-chan string, substr string) string {
	t.Helper()
	timeout := time.After(deadline)
	for {
		select {
		case l := <-lines:
			if strings.Contains(l, substr) {
				return l
			}
		case <-timeout:
			t.Fatalf("no log line contains %q", substr)
			return ""
		}
	}
}

func TestMuxRunRejectsBadSources(t *testing.T) {
	tests := []struct {
		name string
		srcs []Source
		want string
	}{
		{"Two sources with one name are rejected.", []Source{newFakeSource("file"), newFakeSource("file")}, `two pod sources are named "file"`},
		{"A nil source is rejected.", []Source{newFakeSource("file"), nil}, "pod source 1 is nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMux(tc.srcs, clocktesting.NewFakeClock(epoch), logr.Discard())
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			err := m.Run(ctx)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestMuxStopsWhileUpdatesAreUnread(t *testing.T) {
	src := newFakeSource("file")
	m := NewMux([]Source{src}, clocktesting.NewFakeClock(epoch), logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- m.Run(ctx) }()

	// Each snapshot adds one pod, so it makes one ADD; nobody reads them.
	// Once the source took snapshot n+3, the Mux has merged snapshot n
	// (the source, the forwarder and the merge loop each hold one), so
	// after updatesBuffer+3 snapshots the buffer is full and the merge
	// loop is blocked.
	var pods []*corev1.Pod
	for i := range updatesBuffer + 3 {
		pods = append(pods, pod(fmt.Sprintf("p%d", i)))
		src.send(t, copyPods(pods)...)
	}
	if n := len(m.Updates()); n != updatesBuffer {
		t.Fatalf("Updates() holds %d updates, want a full buffer of %d", n, updatesBuffer)
	}
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("Run() = %v, want nil", err)
		}
	case <-time.After(deadline):
		t.Fatal("Run blocked on a full Updates channel after its context ended")
	}
}
