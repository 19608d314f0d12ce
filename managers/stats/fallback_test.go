package stats

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
	"k8s.io/klog/v2"
)

// brokenSandboxRuntime behaves as containerd 2 does with a sandbox made
// without a cgroup parent: ListPodSandboxStats fails for the whole list,
// and PodSandboxStats fails for that sandbox only.
type brokenSandboxRuntime struct {
	*critest.FakeRuntimeService
	mu     sync.Mutex
	broken map[string]error // sandbox ID -> its PodSandboxStats error
}

func (b *brokenSandboxRuntime) ListPodSandboxStats(ctx context.Context, f *runtimeapi.PodSandboxStatsFilter) ([]*runtimeapi.PodSandboxStats, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id := range b.broken {
		return nil, status.Error(codes.Unknown, fmt.Sprintf("failed to decode sandbox container metrics for sandbox %q: sandbox %s has no cgroup parent", id, id))
	}
	return b.FakeRuntimeService.ListPodSandboxStats(ctx, f)
}

func (b *brokenSandboxRuntime) PodSandboxStats(ctx context.Context, id string) (*runtimeapi.PodSandboxStats, error) {
	b.mu.Lock()
	err := b.broken[id]
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return b.FakeRuntimeService.PodSandboxStats(ctx, id)
}

func (b *brokenSandboxRuntime) setBroken(id string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		delete(b.broken, id)
		return
	}
	b.broken[id] = err
}

// lineLog counts the log lines holding each substring.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{})
}

func (l *lineLog) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, sub) {
			n++
		}
	}
	return n
}

const podFailureLine = "cannot read a pod's sandbox stats"

// threePods: "good" (sb1, full stats), "bad" (its sandbox stats fail, its
// container's work) and "dark" (nothing of it can be read).
func threePods(t *testing.T) (*fakeRuntime, *brokenSandboxRuntime, *fakeHost) {
	t.Helper()
	h := newFakeHost(t)
	f := newFakeRuntime()
	f.rs.SetFakeSandboxes([]*critest.FakePodSandbox{
		sandbox(sb1, "good", "uid1", "me", runtimeapi.PodSandboxState_SANDBOX_READY, 100),
		sandbox("sbbad", "bad", "uid2", "me", runtimeapi.PodSandboxState_SANDBOX_READY, 100),
		sandbox("sbdark", "dark", "uid3", "me", runtimeapi.PodSandboxState_SANDBOX_READY, 100),
	})
	f.rs.SetFakeContainers([]*critest.FakeContainer{
		container(c1, sb1, "app", "me", runtimeapi.ContainerState_CONTAINER_RUNNING, 200),
		container(c2, "sbbad", "app", "me", runtimeapi.ContainerState_CONTAINER_RUNNING, 200),
		container("cdark", "sbdark", "app", "me", runtimeapi.ContainerState_CONTAINER_RUNNING, 200),
	})
	cstat := func(id string, v uint64) *runtimeapi.ContainerStats {
		return &runtimeapi.ContainerStats{
			Attributes: &runtimeapi.ContainerAttributes{Id: id},
			Cpu:        &runtimeapi.CpuUsage{UsageCoreNanoSeconds: u64(v), UsageNanoCores: u64(1)},
			Memory:     &runtimeapi.MemoryUsage{WorkingSetBytes: u64(v * 2)},
		}
	}
	f.rs.SetFakePodSandboxStats([]*runtimeapi.PodSandboxStats{{
		Attributes: &runtimeapi.PodSandboxAttributes{Id: sb1},
		Linux: &runtimeapi.LinuxPodSandboxStats{
			Cpu:        &runtimeapi.CpuUsage{UsageCoreNanoSeconds: u64(3000), UsageNanoCores: u64(1)},
			Memory:     &runtimeapi.MemoryUsage{WorkingSetBytes: u64(6000)},
			Containers: []*runtimeapi.ContainerStats{cstat(c1, 1000)},
		},
	}})
	f.rs.SetFakeContainerStats([]*runtimeapi.ContainerStats{cstat(c1, 1000), cstat(c2, 2000)})
	b := &brokenSandboxRuntime{FakeRuntimeService: f.rs, broken: map[string]error{
		"sbbad":  status.Error(codes.Unknown, "sandbox sbbad has no cgroup parent"),
		"sbdark": status.Error(codes.Unknown, "sandbox sbdark has no cgroup parent"),
	}}
	return f, b, h
}

func TestOneBadSandboxDoesNotFailTheNode(t *testing.T) {
	t.Parallel()
	f, b, h := threePods(t)
	var logs lineLog
	p := NewCRI(b, f.is, f.clk, logs.logger(), Config{InstanceID: "me", CgroupfsRoot: h.cgroups, ProcRoot: h.proc, RootDir: filepath.Dir(h.proc)})

	s, err := p.Summary(context.Background(), false)
	if err != nil {
		t.Fatalf("Summary failed for the whole node: %v", err)
	}
	if s.Node.CPU == nil || s.Node.Memory == nil {
		t.Errorf("node stats missing: %+v", s.Node)
	}
	if len(s.Pods) != 2 || s.Pods[0].PodRef.Name != "bad" || s.Pods[1].PodRef.Name != "good" {
		t.Fatalf("pods %+v, want bad (partial) and good; dark left out", s.Pods)
	}
	good, bad := s.Pods[1], s.Pods[0]
	if val(t, "good pod cpu", good.CPU.UsageCoreNanoSeconds) != 3000 || val(t, "good app memory", good.Containers[0].Memory.WorkingSetBytes) != 2000 {
		t.Errorf("good pod %+v, want its PodSandboxStats", good)
	}
	if bad.CPU != nil || len(bad.Containers) != 1 || val(t, "bad app cpu", bad.Containers[0].CPU.UsageCoreNanoSeconds) != 2000 {
		t.Errorf("bad pod %+v, want no pod figures and its container's ContainerStats", bad)
	}
	if n := logs.count(podFailureLine); n != 2 {
		t.Errorf("%d pod failure lines after one scrape, want one per failing pod (2):\n%s", n, strings.Join(logs.lines, "\n"))
	}
	if n := logs.count("cannot list pod sandbox stats"); n != 1 {
		t.Errorf("%d list failure lines, want 1", n)
	}

	// More scrapes with the same errors log nothing more.
	for range 3 {
		if _, err := p.Summary(context.Background(), true); err != nil {
			t.Fatal(err)
		}
	}
	if n := logs.count(podFailureLine); n != 2 {
		t.Errorf("%d pod failure lines after four scrapes, want still 2 (once per pod until its error changes)", n)
	}

	// A changed error is logged once more; a pod that recovers and fails
	// again is logged again.
	b.setBroken("sbbad", status.Error(codes.DeadlineExceeded, "stats timed out"))
	b.setBroken("sbdark", nil)
	f.rs.SetFakePodSandboxStats([]*runtimeapi.PodSandboxStats{
		{Attributes: &runtimeapi.PodSandboxAttributes{Id: sb1}, Linux: &runtimeapi.LinuxPodSandboxStats{}},
		{Attributes: &runtimeapi.PodSandboxAttributes{Id: "sbdark"}, Linux: &runtimeapi.LinuxPodSandboxStats{
			Memory: &runtimeapi.MemoryUsage{WorkingSetBytes: u64(1)},
		}},
	})
	s, err = p.Summary(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 3 {
		t.Errorf("%d pods once dark's stats work, want 3", len(s.Pods))
	}
	if n := logs.count(podFailureLine); n != 3 {
		t.Errorf("%d pod failure lines after bad's error changed, want 3", n)
	}
	b.setBroken("sbdark", status.Error(codes.Unknown, "sandbox sbdark has no cgroup parent"))
	if _, err := p.Summary(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if n := logs.count(podFailureLine); n != 4 {
		t.Errorf("%d pod failure lines after dark failed again, want 4", n)
	}
}

func TestListContainerStatsFailureReadsEachContainer(t *testing.T) {
	t.Parallel()
	f, _, h := threePods(t)
	f.rs.InjectError("ListPodSandboxStats", status.Error(codes.Unimplemented, "not here"))
	f.rs.InjectError("ListContainerStats", status.Error(codes.Unknown, "container cdark has no task"))
	p := f.provider(h, Config{InstanceID: "me"})

	pods, err := p.ListPodStats(context.Background(), true)
	if err != nil {
		t.Fatalf("ListPodStats failed for every pod: %v", err)
	}
	if len(pods) != 3 {
		t.Fatalf("%d pods, want 3", len(pods))
	}
	if pods[2].PodRef.Name != "good" || pods[1].PodRef.Name != "dark" {
		t.Fatalf("pods %+v, want bad, dark and good", pods)
	}
	if got := val(t, "good app cpu", pods[2].Containers[0].CPU.UsageCoreNanoSeconds); got != 1000 {
		t.Errorf("good app cpu %d, want its ContainerStats' 1000", got)
	}
	if pods[1].Containers[0].CPU != nil {
		t.Errorf("dark app cpu %+v, want none", pods[1].Containers[0].CPU)
	}
}

func TestTheCRIClientsFailuresAreDemoted(t *testing.T) {
	t.Parallel()
	for _, verbosity := range []int{0, 4} {
		var lines []string
		log := funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) }, funcr.Options{Verbosity: verbosity})
		p := NewCRI(critest.NewFakeRuntimeService(), critest.NewFakeImageService(), nil, log, Config{})
		// What k8s.io/cri-client does with a failed ListPodSandboxStats.
		klog.FromContext(p.quietCRI(context.Background())).Error(errors.New("sandbox x has no cgroup parent"),
			"ListPodSandboxStats with filter from runtime service failed")
		want := 0
		if verbosity >= 4 {
			want = 1
		}
		if len(lines) != want {
			t.Errorf("verbosity %d: %d lines %q, want %d (the client's errors at V(4))", verbosity, len(lines), lines, want)
		}
	}
}
