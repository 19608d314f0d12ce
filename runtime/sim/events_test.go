package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestGetContainerEventsStreamsTheLifecycle(t *testing.T) {
	e := newEnv(t, Config{})
	ctx, cancel := context.WithCancel(e.ctx)
	ch := make(chan *runtimeapi.ContainerEventResponse) // unbuffered: the runtime must not block on it
	established := make(chan struct{})
	done := async(func() error {
		return e.r.GetContainerEvents(ctx, ch, func(s runtimeapi.RuntimeService_GetContainerEventsClient) {
			if s != nil {
				t.Error("in-process stream is not nil")
			}
			close(established)
		})
	})
	<-established
	sb := e.sandbox(map[string]string{"sim.nodekit.io/app.exit-after": "5s", "sim.nodekit.io/app.exit-code": "1"})
	id := e.start(sb, "app")
	e.clk.Step(5 * time.Second)
	if err := e.r.RemovePodSandbox(e.ctx, sb); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"CREATED sb", "STARTED sb", "CREATED app", "STARTED app", "STOPPED app",
		"STOPPED sb", "DELETED app", "DELETED sb",
	}
	var got []string
	for range want {
		var ev *runtimeapi.ContainerEventResponse
		select {
		case ev = <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("events so far %v, want %v", got, want)
		}
		who := map[string]string{sb: "sb", id: "app"}[ev.ContainerId]
		got = append(got, strings.TrimSuffix(strings.TrimPrefix(ev.ContainerEventType.String(), "CONTAINER_"), "_EVENT")+" "+who)
		if ev.PodSandboxStatus.GetId() != sb {
			t.Errorf("event %s carries sandbox %q", got[len(got)-1], ev.PodSandboxStatus.GetId())
		}
		if ev.ContainerId == id && ev.ContainerEventType == runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT {
			if len(ev.ContainersStatuses) != 1 || ev.ContainersStatuses[0].ExitCode != 1 || ev.CreatedAt != epoch.Add(5*time.Second).UnixNano() {
				t.Errorf("stop event: statuses %v created %d", ev.ContainersStatuses, ev.CreatedAt)
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	cancel()
	if err := result(t, done, "GetContainerEvents"); status.Code(err) != codes.Canceled {
		t.Fatalf("GetContainerEvents returned %v, want Canceled", err)
	}
}

func TestEventsGoToEverySubscriber(t *testing.T) {
	e := newEnv(t, Config{})
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	var chans []chan *runtimeapi.ContainerEventResponse
	var dones []<-chan error
	for range 2 {
		ch := make(chan *runtimeapi.ContainerEventResponse, 10)
		ok := make(chan struct{})
		dones = append(dones, async(func() error {
			return e.r.GetContainerEvents(ctx, ch, func(runtimeapi.RuntimeService_GetContainerEventsClient) { close(ok) })
		}))
		<-ok
		chans = append(chans, ch)
	}
	sb := e.sandbox(nil)
	for i, ch := range chans {
		select {
		case ev := <-ch:
			if ev.ContainerId != sb || ev.ContainerEventType != runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT {
				t.Errorf("subscriber %d got %v", i, ev)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("subscriber %d got nothing", i)
		}
	}
	cancel()
	for _, d := range dones {
		result(t, d, "GetContainerEvents")
	}
}
