package cri

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/sim"
)

// The status an event shows is the one GetPodStatus reads at that moment:
// the simulated runtime sends each event with a snapshot of the sandbox and
// its containers.
func TestPodStatusFromEventMatchesGetPodStatus(t *testing.T) {
	dir := t.TempDir()
	resolv := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver 10.0.0.53\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	rt := sim.New(clk, logr.Discard(), sim.Config{})
	m := NewManager(rt, rt, clk, logr.Discard(), Config{InstanceID: testInstance, RootDir: filepath.Join(dir, "root"), ResolvConf: resolv,
		PodLogsDir: filepath.Join(dir, "root", "logs"), ContainerLogsDir: filepath.Join(dir, "containers")})
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan *runtimeapi.ContainerEventResponse, 100)
	subscribed, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		_ = rt.GetContainerEvents(ctx, events, func(runtimeapi.RuntimeService_GetContainerEventsClient) { close(subscribed) })
	}()
	defer func() { cancel(); <-done }()
	<-subscribed

	pod := newPod("p1", "a", "b")
	if err := m.SyncPod(ctx, pod, &noderuntime.PodStatus{ID: pod.UID}).Error(); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	last := receive(t, events, 6) // the sandbox's and each container's creation and start
	compareWithGetPodStatus(t, m, "after the start", last)

	id := containerIDByName(t, m, "a")
	if err := rt.StopContainer(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	last = receive(t, events, 1)
	compareWithGetPodStatus(t, m, "after a container was killed", last)

	other := NewManager(rt, rt, clk, logr.Discard(), Config{InstanceID: "another-node", RootDir: dir, ResolvConf: resolv,
		PodLogsDir: filepath.Join(dir, "logs"), ContainerLogsDir: filepath.Join(dir, "containers")})
	if _, ok := other.PodStatusFromEvent(last); ok {
		t.Error("another instance's manager read this instance's pod from an event")
	}
	if _, ok := m.PodStatusFromEvent(&runtimeapi.ContainerEventResponse{ContainerId: id}); ok {
		t.Error("an event without a sandbox status was read")
	}
}

// receive returns the nth event from now.
func receive(t *testing.T, events <-chan *runtimeapi.ContainerEventResponse, n int) *runtimeapi.ContainerEventResponse {
	t.Helper()
	var ev *runtimeapi.ContainerEventResponse
	for range n {
		select {
		case ev = <-events:
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10s")
		}
	}
	return ev
}

// containerIDByName returns the ID of the manager's container name.
func containerIDByName(t *testing.T, m *Manager, name string) string {
	t.Helper()
	pods, err := m.GetPods(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		for _, c := range p.Containers {
			if c.Name == name {
				return c.ID.ID
			}
		}
	}
	t.Fatalf("no container %q", name)
	return ""
}

func compareWithGetPodStatus(t *testing.T, m *Manager, when string, ev *runtimeapi.ContainerEventResponse) {
	t.Helper()
	got, ok := m.PodStatusFromEvent(ev)
	if !ok {
		t.Fatalf("%s: the event was not read", when)
	}
	want, err := m.GetPodStatus(context.Background(), got.ID, got.Name, got.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "web-p1" || got.Namespace != "default" || got.ID != "p1" {
		t.Errorf("%s: pod %s/%s (%s), want default/web-p1 (p1)", when, got.Namespace, got.Name, got.ID)
	}
	if len(got.SandboxStatuses) != 1 || len(want.SandboxStatuses) != 1 || !proto.Equal(got.SandboxStatuses[0], want.SandboxStatuses[0]) {
		t.Errorf("%s: sandboxes differ:\n got %v\nwant %v", when, got.SandboxStatuses, want.SandboxStatuses)
	}
	if len(got.IPs) == 0 || got.IPs[0] != want.IPs[0] {
		t.Errorf("%s: IPs %v, want %v", when, got.IPs, want.IPs)
	}
	if len(got.ContainerStatuses) != len(want.ContainerStatuses) {
		t.Fatalf("%s: %d containers, want %d", when, len(got.ContainerStatuses), len(want.ContainerStatuses))
	}
	for i := range want.ContainerStatuses {
		if *got.ContainerStatuses[i] != *want.ContainerStatuses[i] {
			t.Errorf("%s: container %d:\n got %+v\nwant %+v", when, i, *got.ContainerStatuses[i], *want.ContainerStatuses[i])
		}
	}
}
