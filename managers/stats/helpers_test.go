package stats

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
	clocktesting "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// fakeHost is a cgroup v1 mount and a procfs in temporary directories.
type fakeHost struct {
	t       *testing.T
	cgroups string
	proc    string
}

func newFakeHost(t *testing.T) *fakeHost {
	t.Helper()
	dir := t.TempDir()
	h := &fakeHost{t: t, cgroups: filepath.Join(dir, "cgroup"), proc: filepath.Join(dir, "proc")}
	h.write(h.proc, "stat", "cpu  1 2 3\nbtime 1700000000\nprocesses 5\n")
	h.write(h.proc, "meminfo", "MemTotal:       1000000 kB\nMemFree:         200000 kB\nInactive(file):   50000 kB\n")
	h.write(h.proc, "sys/kernel/pid_max", "4194304\n")
	h.write(h.proc, "sys/kernel/threads-max", "190000\n")
	h.write(h.proc, "loadavg", "0.50 0.40 0.30 2/321 12345\n")
	h.write(h.proc, "net/dev", "Inter-|   Receive                                                |  Transmit\n"+
		" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"+
		"    lo:  100 1 0 0 0 0 0 0  100 1 0 0 0 0 0 0\n"+
		"  eth0: 5000 10 1 0 0 0 0 0 7000 12 2 0 0 0 0 0\n"+
		"vethab: 9 1 0 0 0 0 0 0 9 1 0 0 0 0 0 0\n")
	h.cgroup("/", 90e9, 600<<20, 100<<20, "")
	return h
}

func (h *fakeHost) write(dir, name, content string) {
	h.t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// cgroup writes a v1 cgroup's cpuacct and memory files; limit "" is
// unlimited.
func (h *fakeHost) cgroup(path string, cpuNanos, usage, inactiveFile uint64, limit string) {
	h.t.Helper()
	h.write(filepath.Join(h.cgroups, "cpuacct", path), "cpuacct.usage", itoa(cpuNanos)+"\n")
	mem := filepath.Join(h.cgroups, "memory", path)
	h.write(mem, "memory.usage_in_bytes", itoa(usage)+"\n")
	h.write(mem, "memory.stat", "cache 1\nrss 2\ntotal_rss "+itoa(usage/4)+"\ntotal_inactive_file "+itoa(inactiveFile)+
		"\ntotal_pgfault 77\ntotal_pgmajfault 3\n")
	if limit == "" {
		limit = "9223372036854771712"
	}
	h.write(mem, "memory.limit_in_bytes", limit+"\n")
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }

// fakeRuntime holds sandboxes and containers for the CRI fakes.
type fakeRuntime struct {
	rs  *critest.FakeRuntimeService
	is  *critest.FakeImageService
	clk *clocktesting.FakeClock
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{
		rs:  critest.NewFakeRuntimeService(),
		is:  critest.NewFakeImageService(),
		clk: clocktesting.NewFakeClock(time.Unix(1800000000, 0)),
	}
}

func (f *fakeRuntime) provider(h *fakeHost, cfg Config) *CRI {
	cfg.CgroupfsRoot, cfg.ProcRoot = h.cgroups, h.proc
	if cfg.RootDir == "" {
		cfg.RootDir = filepath.Dir(h.proc)
	}
	if cfg.PodLogsDir == "" {
		cfg.PodLogsDir = filepath.Join(cfg.RootDir, "logs")
	}
	return NewCRI(f.rs, f.is, f.clk, logr.Discard(), cfg)
}

func sandbox(id, name, uid, instance string, state runtimeapi.PodSandboxState, created int64) *critest.FakePodSandbox {
	return &critest.FakePodSandbox{PodSandboxStatus: runtimeapi.PodSandboxStatus{
		Id:        id,
		Metadata:  &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "ns", Uid: uid},
		State:     state,
		CreatedAt: created,
		Labels:    map[string]string{noderuntime.LabelInstance: instance},
	}}
}

func container(id, sandboxID, name, instance string, state runtimeapi.ContainerState, created int64) *critest.FakeContainer {
	return &critest.FakeContainer{SandboxID: sandboxID, ContainerStatus: runtimeapi.ContainerStatus{
		Id:        id,
		Metadata:  &runtimeapi.ContainerMetadata{Name: name},
		State:     state,
		CreatedAt: created,
		Labels:    map[string]string{noderuntime.LabelInstance: instance},
	}}
}

func u64(v uint64) *runtimeapi.UInt64Value { return &runtimeapi.UInt64Value{Value: v} }
