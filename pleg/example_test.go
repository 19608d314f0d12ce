package pleg

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	testingclock "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// A pod worker waits for a status newer than its last sync; the PLEG's next
// write (or relist) releases it.
func ExampleCache_GetNewerThan() {
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cache := NewCache(clk)
	lastSync := clk.Now()

	done := make(chan struct{})
	go func() {
		defer close(done)
		status, err := cache.GetNewerThan(context.Background(), "pod-1", lastSync)
		fmt.Println(status.IPs, err)
	}()

	clk.Step(time.Second)
	cache.Set("pod-1", &noderuntime.PodStatus{ID: "pod-1", IPs: []string{"10.0.0.7"}}, nil, clk.Now())
	<-done
	// Output: [10.0.0.7] <nil>
}

// One relist of a runtime with a running pod: the status lands in the cache,
// then the event goes out.
func ExampleGeneric_Relist() {
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt := newFakeRuntime()
	rt.setPods(pod("pod-1", ctr("abc", noderuntime.ContainerStateRunning)))
	cache := NewCache(clk)
	g := NewGeneric(rt, cache, clk, nil, logr.Discard(), Config{})

	g.Relist(context.Background())
	ev := <-g.Watch()
	status, _ := cache.Get(ev.ID)
	fmt.Println(ev.Type, ev.ID, ev.Data, status.Name)
	// Output: ContainerStarted pod-1 abc pod-pod-1
}
