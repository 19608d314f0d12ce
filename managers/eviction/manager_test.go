package eviction

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"
)

type fakeStats struct {
	nodes []*statsapi.NodeStats // successive NodeStats answers; the last repeats
	pods  []statsapi.PodStats
}

func (f *fakeStats) NodeStats(context.Context, bool) (*statsapi.NodeStats, error) {
	n := f.nodes[0]
	if len(f.nodes) > 1 {
		f.nodes = f.nodes[1:]
	}
	return n, nil
}

func (f *fakeStats) ListPodStats(context.Context, bool) ([]statsapi.PodStats, error) {
	return f.pods, nil
}

type fakePods []*corev1.Pod

func (f fakePods) ActivePods() []*corev1.Pod { return f }

type kill struct {
	pod    string
	grace  int64
	status corev1.PodStatus
}

type fakeKiller struct{ kills []kill }

func (f *fakeKiller) KillPod(_ context.Context, p *corev1.Pod, grace int64, status func(*corev1.PodStatus)) error {
	st := p.Status.DeepCopy()
	status(st)
	f.kills = append(f.kills, kill{p.Name, grace, *st})
	return nil
}

// reclaimLog records the order of node-level reclaims.
type reclaimLog struct{ calls []string }

type fakeReclaimer struct {
	calls int
	log   *reclaimLog
}

func (f *fakeReclaimer) DeleteUnusedImages(context.Context) (uint64, error) {
	f.calls++
	f.log.calls = append(f.log.calls, "images")
	return 100, nil
}

type fakeDead struct {
	calls int
	log   *reclaimLog
}

func (f *fakeDead) DeleteAllUnusedContainers(context.Context) error {
	f.calls++
	f.log.calls = append(f.log.calls, "containers")
	return nil
}

type fakeEvents struct{ events []string }

func (f *fakeEvents) Eventf(obj apiruntime.Object, eventType, reason, messageFmt string, args ...any) {
	f.events = append(f.events, fmt.Sprintf("%s %s %s", eventType, reason, fmt.Sprintf(messageFmt, args...)))
}

func nodeStats(memAvail, fsAvail uint64) *statsapi.NodeStats {
	ws, fsCap := uint64(1000<<20), uint64(100<<30)
	return &statsapi.NodeStats{
		Memory: &statsapi.MemoryStats{AvailableBytes: &memAvail, WorkingSetBytes: &ws},
		Fs:     &statsapi.FsStats{AvailableBytes: &fsAvail, CapacityBytes: &fsCap},
	}
}

type managerFixture struct {
	stats    *fakeStats
	killer   *fakeKiller
	reclaim  *fakeReclaimer
	dead     *fakeDead
	reclaims *reclaimLog
	events   *fakeEvents
	clk      *clocktesting.FakeClock
	m        *Default
}

func newManager(t *testing.T, cfg Config, pods []*corev1.Pod, nodes ...*statsapi.NodeStats) *managerFixture {
	t.Helper()
	log := &reclaimLog{}
	f := &managerFixture{stats: &fakeStats{nodes: nodes}, killer: &fakeKiller{}, reclaim: &fakeReclaimer{log: log},
		dead: &fakeDead{log: log}, reclaims: log, events: &fakeEvents{},
		clk: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	var err error
	f.m, err = NewDefault(f.stats, fakePods(pods), f.killer, f.reclaim, f.dead, nil, f.events, f.clk, logr.Discard(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func threePods() ([]*corev1.Pod, []statsapi.PodStats) {
	const m = 1 << 20
	static := pod("static-besteffort", 0, "")
	static.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	grace := int64(30)
	burst := pod("burstable", 0, "100Mi")
	burst.Spec.TerminationGracePeriodSeconds = &grace
	pods := []*corev1.Pod{pod("guaranteed", 0, "500Mi"), burst, static, pod("besteffort", 0, "")}
	stats := []statsapi.PodStats{
		podStats("guaranteed", 400*m, 1*m, 1, 1), podStats("burstable", 150*m, 5*m, 1, 1),
		podStats("static-besteffort", 900*m, 50*m, 1, 1), podStats("besteffort", 80*m, 2*m, 1, 1),
	}
	return pods, stats
}

func TestSynchronizeEvictsForMemoryTheRankedPodButNeverAStaticOne(t *testing.T) {
	pods, stats := threePods()
	f := newManager(t, Config{}, pods, nodeStats(50<<20, 50<<30))
	f.stats.pods = stats
	evicted, err := f.m.Synchronize(context.Background())
	if err != nil || evicted == nil {
		t.Fatalf("Synchronize = %v, %v", evicted, err)
	}
	// burstable is 50Mi over its request, besteffort 80Mi over its zero
	// request: besteffort (more above requests, same priority) goes first.
	if len(f.killer.kills) != 1 || f.killer.kills[0].pod != "besteffort" || f.killer.kills[0].grace != 1 {
		t.Fatalf("kills %+v, want besteffort with the 1s hard grace period", f.killer.kills)
	}
	st := f.killer.kills[0].status
	if st.Phase != corev1.PodFailed || st.Reason != "Evicted" || !strings.HasPrefix(st.Message, "The node was low on resource: memory. Container main was using 80Mi") {
		t.Errorf("status %s %s %q", st.Phase, st.Reason, st.Message)
	}
	if len(st.Conditions) != 1 || st.Conditions[0].Type != corev1.DisruptionTarget || st.Conditions[0].Reason != "TerminationByKubelet" {
		t.Errorf("conditions %+v, want DisruptionTarget", st.Conditions)
	}
	if len(f.events.events) != 1 || !strings.HasPrefix(f.events.events[0], "Warning Evicted The node was low on resource: memory.") {
		t.Errorf("events %v", f.events.events)
	}
	if c := f.m.Conditions(); !c[corev1.NodeMemoryPressure] || c[corev1.NodeDiskPressure] {
		t.Errorf("conditions %v, want MemoryPressure only", c)
	}
	if f.reclaim.calls != 0 || f.dead.calls != 0 {
		t.Error("images or containers were reclaimed for a memory signal")
	}
}

func TestSynchronizeReclaimsContainersAndImagesFirstForDisk(t *testing.T) {
	pods, stats := threePods()
	f := newManager(t, Config{}, pods, nodeStats(500<<20, 5<<30), nodeStats(500<<20, 20<<30))
	f.stats.pods = stats
	if evicted, err := f.m.Synchronize(context.Background()); err != nil || evicted != nil {
		t.Fatalf("Synchronize = %v, %v; want no eviction once images freed the disk", evicted, err)
	}
	if got := strings.Join(f.reclaims.calls, ","); got != "containers,images" || !f.m.Conditions()[corev1.NodeDiskPressure] {
		t.Fatalf("reclaims %s (want dead containers, then images), conditions %v", got, f.m.Conditions())
	}
	// Still short after the reclaim: the largest disk user goes (not the
	// static pod).
	f.stats.nodes = []*statsapi.NodeStats{nodeStats(500<<20, 5<<30)}
	if evicted, err := f.m.Synchronize(context.Background()); err != nil || evicted == nil || evicted.Name != "besteffort" {
		t.Fatalf("Synchronize = %v, %v; want besteffort (2Mi over its zero request)", evicted, err)
	}
	if msg := f.killer.kills[0].status.Message; !strings.HasPrefix(msg, "The node was low on resource: ephemeral-storage. ") {
		t.Errorf("message %q", msg)
	}
}

func TestSynchronizeSoftThresholdWaitsForItsGracePeriodAndBoundsThePodsGrace(t *testing.T) {
	pods, stats := threePods()
	pods = pods[1:3] // burstable (grace 30s) and the static pod
	cfg := Config{Hard: "none", Soft: "memory.available<200Mi", SoftGracePeriod: map[string]string{"memory.available": "1m"},
		MaxPodGracePeriodSeconds: 10, MonitoringInterval: 10 * time.Second}
	f := newManager(t, cfg, pods, nodeStats(150<<20, 50<<30))
	f.stats.pods = stats
	for i := 0; i < 6; i++ {
		if evicted, _ := f.m.Synchronize(context.Background()); evicted != nil {
			t.Fatalf("evicted %s after %v, before the 1m grace period", evicted.Name, time.Duration(i)*10*time.Second)
		}
		f.clk.Step(10 * time.Second)
	}
	evicted, err := f.m.Synchronize(context.Background())
	if err != nil || evicted == nil || evicted.Name != "burstable" || f.killer.kills[0].grace != 10 {
		t.Fatalf("Synchronize = %v, %v, kills %+v; want burstable with grace 10", evicted, err, f.killer.kills)
	}
}

func TestConfigPolicy(t *testing.T) {
	t.Parallel()
	p, err := Config{Soft: "memory.available<1Gi", SoftGracePeriod: map[string]string{"memory.available": "90s"},
		MinimumReclaim: map[string]string{"nodefs.available": "1Gi"}}.Policy()
	if err != nil {
		t.Fatal(err)
	}
	var hard, soft int
	for _, th := range p.Thresholds {
		if th.Hard {
			hard++
		} else {
			soft++
			if th.GracePeriod != 90*time.Second {
				t.Errorf("soft grace %v", th.GracePeriod)
			}
		}
		if (th.Signal == SignalNodeFsAvailable && th.Hard) != (th.MinReclaim != nil) {
			t.Errorf("%s min reclaim %v", th.Signal, th.MinReclaim)
		}
	}
	if hard != 5 || soft != 1 {
		t.Errorf("%d hard and %d soft thresholds, want 5 and 1", hard, soft)
	}
	for cfg, want := range map[*Config]string{
		{Soft: "memory.available<1Gi"}:                                                          "has no grace period",
		{SoftGracePeriod: map[string]string{"memory.available": "1m"}}:                          "has no soft threshold",
		{MinimumReclaim: map[string]string{"memory.free": "1Gi"}}:                               "unsupported eviction signal",
		{Hard: "memory.available<x"}:                                                            "eviction hard",
		{MaxPodGracePeriodSeconds: -1}:                                                          "must not be negative",
		{Soft: "pid.available<1k", SoftGracePeriod: map[string]string{"pid.available": "soon"}}: "non-negative duration",
	} {
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(%+v) = %v, want %q", *cfg, err, want)
		}
	}
}

func TestSynchronizeNodeFsOnItsOwnFilesystemReclaimsOnlyDeadContainers(t *testing.T) {
	pods, stats := threePods()
	// The image filesystem is another filesystem (another capacity):
	// removing images cannot free nodefs.
	withImageFs := func(n *statsapi.NodeStats) *statsapi.NodeStats {
		avail, capacity := uint64(50<<30), uint64(200<<30)
		n.Runtime = &statsapi.RuntimeStats{ImageFs: &statsapi.FsStats{AvailableBytes: &avail, CapacityBytes: &capacity}}
		return n
	}
	f := newManager(t, Config{}, pods, withImageFs(nodeStats(500<<20, 5<<30)))
	f.stats.pods = stats
	evicted, err := f.m.Synchronize(context.Background())
	if err != nil || evicted == nil || evicted.Name != "besteffort" {
		t.Fatalf("Synchronize = %v, %v; want besteffort evicted after the reclaim freed nothing", evicted, err)
	}
	if got := strings.Join(f.reclaims.calls, ","); got != "containers" {
		t.Errorf("reclaims %q, want only the dead containers for nodefs on its own filesystem", got)
	}
	// imagefs short: both.
	f.reclaims.calls = nil
	low, capacity := uint64(1<<30), uint64(200<<30)
	n := nodeStats(500<<20, 50<<30)
	n.Runtime = &statsapi.RuntimeStats{ImageFs: &statsapi.FsStats{AvailableBytes: &low, CapacityBytes: &capacity}}
	f.stats.nodes = []*statsapi.NodeStats{n}
	f.killer.kills = nil
	if _, err := f.m.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.reclaims.calls, ","); got != "containers,images" {
		t.Errorf("reclaims %q for imagefs, want containers,images", got)
	}
}
