package cri

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// logLines is a V(2) logger that keeps every line it is given.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		l.lines = append(l.lines, args)
		l.mu.Unlock()
	}, funcr.Options{Verbosity: 2})
}

func (l *logLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// TestLimitStartsLogsEachQueuedCallWithItsPod holds the one slot with a
// StartContainer that got it at once (not logged), queues a CreateContainer
// for 3 s and a StartContainer whose context ends (not logged: it never got
// a slot), and expects one line naming the create's pod, container, wait
// and the limit.
func TestLimitStartsLogsEachQueuedCallWithItsPod(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC))
	var logs logLines
	b := newBlockingStarts()
	l := LimitStarts(b, 1, clk, prometheus.NewRegistry(), logs.logger()).(*limitedStarts)
	go func() { _ = l.StartContainer(context.Background(), "first") }()
	<-b.entered
	sb := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "shop", Uid: "uid-1"}}
	created := make(chan error)
	go func() {
		_, err := l.CreateContainer(context.Background(), "sb", containerConfig("app"), sb)
		created <- err
	}()
	waitQueued(t, l.slots, 1)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan error)
	go func() { started <- l.StartContainer(ctx, "gone") }()
	waitQueued(t, l.slots, 2)
	cancel()
	if err := <-started; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled start: %v, want context.Canceled", err)
	}
	clk.Step(3 * time.Second)
	b.proceed <- struct{}{} // the first start ends: the create gets the slot
	<-b.entered
	b.proceed <- struct{}{}
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	lines := logs.all()
	if len(lines) != 1 {
		t.Fatalf("logged %d lines, want 1 (the queued create only): %q", len(lines), lines)
	}
	for _, want := range []string{`"msg"="Waited for a runtime start slot"`, `"operation"="create_container"`, `"wait"="3s"`,
		`"limit"=1`, `"pod"={"name"="web" "namespace"="shop"}`, `"podUID"="uid-1"`, `"container"="app"`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the line %q lacks %s", lines[0], want)
		}
	}
}

// TestLimitStartsLogsASandboxWaitWithItsPod queues a RunPodSandbox behind
// a CreateContainer for 2 s: its line names the sandbox's pod.
func TestLimitStartsLogsASandboxWaitWithItsPod(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC))
	var logs logLines
	b := newBlockingStarts()
	l := LimitStarts(b, 1, clk, nil, logs.logger()).(*limitedStarts)
	go func() { _, _ = l.CreateContainer(context.Background(), "sb", containerConfig("c"), nil) }()
	<-b.entered
	done := make(chan error)
	go func() {
		_, err := l.RunPodSandbox(context.Background(), &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "pb-7", Namespace: "default", Uid: "u7"}}, "")
		done <- err
	}()
	waitQueued(t, l.slots, 1)
	clk.Step(2 * time.Second)
	b.proceed <- struct{}{}
	<-b.entered
	b.proceed <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lines := logs.all()
	if len(lines) != 1 || !strings.Contains(lines[0], `"operation"="run_podsandbox"`) || !strings.Contains(lines[0], `"wait"="2s"`) ||
		!strings.Contains(lines[0], `"pod"={"name"="pb-7" "namespace"="default"}`) {
		t.Fatalf("logged %q, want one run_podsandbox line of pod pb-7 with a 2s wait", lines)
	}
}
