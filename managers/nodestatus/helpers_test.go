package nodestatus

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const gi = int64(1) << 30

func testMachine() *Machine {
	return &Machine{
		NumCPU: 4, MemoryBytes: 8 * gi, EphemeralStorageBytes: 100 * gi,
		MachineID: "machine-1", SystemUUID: "uuid-1", BootID: "boot-1",
		KernelVersion: "6.8.0-test", OSImage: "Test Linux 1.0",
		HostIP: net.ParseIP("192.0.2.10"),
	}
}

func healthyUsage() *Usage {
	return &Usage{
		MemoryAvailableBytes: 4 * gi,
		DiskAvailableBytes:   50 * gi, DiskCapacityBytes: 100 * gi,
		InodesFree: 500_000, Inodes: 1_000_000,
		PIDMax: 4_194_304, Processes: 500,
	}
}

// fakeMachine is a MachineInfo whose answers tests change.
type fakeMachine struct {
	mu       sync.Mutex
	info     *Machine
	usage    *Usage
	infoErr  error
	usageErr error
}

func newFakeMachine() *fakeMachine {
	return &fakeMachine{info: testMachine(), usage: healthyUsage()}
}

func (f *fakeMachine) Info() (*Machine, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.infoErr != nil {
		return nil, f.infoErr
	}
	m := *f.info
	return &m, nil
}

func (f *fakeMachine) Usage() (*Usage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.usageErr != nil {
		return nil, f.usageErr
	}
	u := *f.usage
	return &u, nil
}

func (f *fakeMachine) setUsage(u *Usage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.usage = u
}

// fakeRuntime answers Version and counts the calls.
type fakeRuntime struct {
	mu    sync.Mutex
	v     *noderuntime.VersionInfo
	err   error
	calls int
}

func (f *fakeRuntime) versionCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeRuntime) Version(context.Context) (*noderuntime.VersionInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	v := *f.v
	return &v, nil
}

// fakeHealth is a HealthSource whose verdict tests change.
type fakeHealth struct {
	mu  sync.Mutex
	err error
}

func (f *fakeHealth) Ready() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *fakeHealth) set(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// harness runs a Reporter against a fake clientset and a fake clock.
type harness struct {
	t       *testing.T
	cfg     Config
	client  *fake.Clientset
	clk     *testingclock.FakeClock
	machine *fakeMachine
	rt      *fakeRuntime
	health  *fakeHealth
	r       *Reporter
	events  chan event
	cancel  context.CancelFunc
	done    chan error
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newHarness(t *testing.T, cfg Config, objs ...runtime.Object) *harness {
	t.Helper()
	if cfg.NodeName == "" {
		cfg.NodeName = "node-1"
	}
	h := &harness{
		t: t, cfg: cfg.withDefaults(),
		client:  fake.NewClientset(objs...),
		clk:     testingclock.NewFakeClock(t0),
		machine: newFakeMachine(),
		rt:      &fakeRuntime{v: &noderuntime.VersionInfo{RuntimeName: "containerd", RuntimeVersion: "v2.4.2", APIVersion: "v1"}},
		health:  &fakeHealth{},
		events:  make(chan event),
		done:    make(chan error, 1),
	}
	// The fake tracker sets no UIDs; the API server does.
	h.client.PrependReactor("create", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if n, ok := a.(k8stesting.CreateAction).GetObject().(*corev1.Node); ok && n.UID == "" {
			n.UID = types.UID("uid-" + n.Name)
		}
		return false, nil, nil
	})
	h.r = New(h.client, h.machine, h.rt, h.health, h.clk, testr.New(t), cfg)
	return h
}

// start runs the Reporter; stop is registered as a cleanup.
func (h *harness) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.r.hook = func(e event) {
		select {
		case h.events <- e:
		case <-ctx.Done():
		}
	}
	go func() { h.done <- h.r.Run(ctx) }()
	h.t.Cleanup(h.stop)
}

// stop ends Run and checks that it returned nil.
func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Run returned %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		h.t.Fatal("Run did not return after its context ended")
	}
}

// wait blocks until Run reaches event want.
func (h *harness) wait(want event) {
	h.t.Helper()
	select {
	case got := <-h.events:
		if got != want {
			h.t.Fatalf("got event %d, want %d", got, want)
		}
	case <-time.After(10 * time.Second):
		h.t.Fatalf("timed out waiting for event %d", want)
	}
}

// tick steps the clock one update period and waits for the sync.
func (h *harness) tick() {
	h.t.Helper()
	h.clk.Step(h.cfg.StatusUpdateFrequency)
	h.wait(eventSynced)
}

// count returns how many actions with this verb, resource and subresource
// the client saw.
func (h *harness) count(verb, resource, subresource string) int {
	n := 0
	for _, a := range h.client.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource && a.GetSubresource() == subresource {
			n++
		}
	}
	return n
}

func (h *harness) statusPosts() int {
	return h.count("patch", "nodes", "status")
}

// node reads the stored Node.
func (h *harness) node() *corev1.Node {
	h.t.Helper()
	n, err := h.client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("nodes"), "", h.cfg.NodeName)
	if err != nil {
		h.t.Fatalf("get node: %v", err)
	}
	return n.(*corev1.Node)
}

func condition(n *corev1.Node, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == typ {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func mustCondition(t *testing.T, n *corev1.Node, typ corev1.NodeConditionType) *corev1.NodeCondition {
	t.Helper()
	c := condition(n, typ)
	if c == nil {
		t.Fatalf("node %s has no %s condition: %+v", n.Name, typ, n.Status.Conditions)
	}
	return c
}

func mt(t time.Time) metav1.Time {
	return metav1.NewTime(t)
}
