package logs

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

var now = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)

type env struct {
	rs  *critest.FakeRuntimeService
	clk *clocktesting.FakeClock
	dir string
	r   *Rotator
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	e := &env{rs: critest.NewFakeRuntimeService(), clk: clocktesting.NewFakeClock(now), dir: t.TempDir()}
	e.r = NewRotator(e.rs, e.clk, logr.Discard(), cfg)
	return e
}

// container adds a container whose log is dir/<id>.log.
func (e *env) container(id string, state runtimeapi.ContainerState) string {
	path := filepath.Join(e.dir, id+".log")
	e.rs.Containers[id] = &critest.FakeContainer{ContainerStatus: runtimeapi.ContainerStatus{
		Id: id, State: state, LogPath: path, Metadata: &runtimeapi.ContainerMetadata{Name: id},
	}}
	return path
}

func write(t *testing.T, path string, size int) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Repeat("x", size)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *env) files(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ents {
		out = append(out, d.Name())
	}
	return out
}

func (e *env) reopens() int {
	n := 0
	for _, c := range e.rs.GetCalls() {
		if c == "ReopenContainerLog" {
			n++
		}
	}
	return n
}

func TestALogUnderTheLimitIsLeftAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{MaxSize: "1Ki"})
	write(t, e.container("a", runtimeapi.ContainerState_CONTAINER_RUNNING), 1023)
	if err := e.r.RotateLogs(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := e.files(t); !slices.Equal(got, []string{"a.log"}) || e.reopens() != 0 {
		t.Errorf("files %v, reopens %d; want the log untouched", got, e.reopens())
	}
}

func TestRotationKeepsMaxFilesAndCompressesAllButTheNewest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{MaxSize: "1Ki", MaxFiles: 5})
	log := e.container("a", runtimeapi.ContainerState_CONTAINER_RUNNING)
	write(t, log, 1024)
	for _, f := range []string{".20261201-090001.gz", ".20261201-090002.gz", ".20261201-090003.gz"} {
		write(t, log+f, 10)
	}
	write(t, log+".20261201-090004", 500)      // the newest rotated one, uncompressed
	write(t, log+".20261201-090003.gz.tmp", 3) // an interrupted compression
	write(t, e.container("stopped", runtimeapi.ContainerState_CONTAINER_EXITED), 4096)

	if err := e.r.RotateLogs(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a.log.20261201-090002.gz", "a.log.20261201-090003.gz", "a.log.20261201-090004.gz",
		"a.log.20261201-093000", "stopped.log",
	}
	if got := e.files(t); !slices.Equal(got, want) {
		t.Errorf("files\n %v\nwant\n %v", got, want)
	}
	if e.reopens() != 1 {
		t.Errorf("ReopenContainerLog called %d times, want once", e.reopens())
	}
	f, err := os.Open(log + ".20261201-090004.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(zr); err != nil || len(b) != 500 {
		t.Errorf("compressed file holds %d bytes (%v), want the 500 of the original", len(b), err)
	}
	if st, err := os.Stat(log + ".20261201-093000"); err != nil || st.Size() != 1024 {
		t.Errorf("rotated file: %v %v, want the 1024 bytes of the log", st, err)
	}
}

func TestAFailedReopenUndoesTheRename(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{MaxSize: "1Ki"})
	write(t, e.container("a", runtimeapi.ContainerState_CONTAINER_RUNNING), 2048)
	e.rs.InjectError("ReopenContainerLog", errors.New("runtime refuses"))
	if err := e.r.RotateLogs(context.Background()); err == nil || !strings.Contains(err.Error(), "runtime refuses") {
		t.Fatalf("err = %v, want the runtime's refusal", err)
	}
	if got := e.files(t); !slices.Equal(got, []string{"a.log"}) {
		t.Errorf("files %v, want the log back under its name", got)
	}
}

func TestAMissingLogIsReopened(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	e.container("a", runtimeapi.ContainerState_CONTAINER_RUNNING)
	err := e.r.RotateLogs(context.Background())
	// The fake runtime does not recreate the file: still missing after.
	if e.reopens() != 1 || err == nil {
		t.Errorf("reopens %d, err %v; want one reopen, then the missing file reported", e.reopens(), err)
	}
}

// signalling reports each ReopenContainerLog on a channel.
type signalling struct {
	*critest.FakeRuntimeService
	reopened chan string
}

func (s signalling) ReopenContainerLog(ctx context.Context, id string) error {
	err := s.FakeRuntimeService.ReopenContainerLog(ctx, id)
	s.reopened <- id
	return err
}

func TestRunChecksEveryInterval(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	rs := signalling{e.rs, make(chan string, 4)}
	r := NewRotator(rs, e.clk, logr.Discard(), Config{MaxSize: "1Ki", MonitorInterval: 10 * time.Second})
	write(t, e.container("a", runtimeapi.ContainerState_CONTAINER_RUNNING), 2048)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	for !e.clk.HasWaiters() {
		runtime.Gosched()
	}
	select {
	case id := <-rs.reopened:
		t.Fatalf("rotated %s before the first interval", id)
	default:
	}
	e.clk.Step(10 * time.Second)
	select {
	case id := <-rs.reopened:
		if id != "a" {
			t.Errorf("reopened %q, want a", id)
		}
	case <-time.After(time.Minute):
		t.Fatal("no rotation a minute after the interval")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestCleanRemovesTheLogAndItsRotations(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	log := e.container("a", runtimeapi.ContainerState_CONTAINER_EXITED)
	write(t, log, 1)
	write(t, log+".20261201-090001.gz", 1)
	write(t, log+".20261201-090002", 1)
	write(t, filepath.Join(e.dir, "a.logger"), 1) // not one of its files
	if err := e.r.Clean(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if got := e.files(t); !slices.Equal(got, []string{"a.logger"}) {
		t.Errorf("files %v, want only the unrelated one", got)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, ""},
		{Config{MaxSize: "10Mi", MaxFiles: 2, MonitorInterval: 3 * time.Second}, ""},
		{Config{MaxSize: "ten"}, "maxSize"},
		{Config{MaxSize: "0"}, "positive"},
		{Config{MaxFiles: 1}, "at least 2"},
		{Config{MonitorInterval: time.Second}, "at least 3s"},
	} {
		err := tt.cfg.Validate()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: err %v, want %q", tt.cfg, err, tt.want)
		}
	}
}
