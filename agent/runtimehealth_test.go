package agent

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	testingclock "k8s.io/utils/clock/testing"
)

// logLines is a concurrency-safe record of log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, prefix+" "+args)
}

func (l *logLines) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, `"msg"="`+msg+`"`) {
			n++
		}
	}
	return n
}

func TestRuntimeCheckLogsEachTransitionOnce(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	rt := &fakeRuntime{}
	logs := &logLines{}
	m := newRuntimeMonitor(rt, clk, funcr.New(logs.add, funcr.Options{}), 5*time.Second, 2*time.Second)
	setErr := func(err error) {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		rt.statusErr = err
	}
	check := func(want string) {
		t.Helper()
		m.checkOnce(context.Background())
		err := m.check()
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Fatalf("check() = %v, want %q", err, want)
		}
	}
	if err := m.check(); err != errNotReady {
		t.Fatalf("check() before the first status call = %v, want errNotReady", err)
	}
	check("")
	setErr(errBoom)
	check("boom")
	check("boom")
	check("boom")
	setErr(nil)
	check("")
	check("")
	if n := logs.count("Container runtime is unhealthy"); n != 1 {
		t.Errorf("%d 'unhealthy' lines for one transition, want 1", n)
	}
	if n := logs.count("Container runtime is healthy again"); n != 1 {
		t.Errorf("%d 'healthy again' lines for one transition, want 1", n)
	}
	signals := 0
	for len(m.changed) > 0 {
		<-m.changed
		signals++
	}
	if signals != 1 {
		t.Errorf("%d pending change signals, want 1 (the channel holds one)", signals)
	}
}

func TestRuntimeCheckFailsWhenStatusDoesNotAnswerInTime(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	rt := &fakeRuntime{}
	rt.hang()
	defer rt.release()
	m := newRuntimeMonitor(rt, clk, funcr.New(func(string, string) {}, funcr.Options{}), 5*time.Second, 2*time.Second)
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { m.checkOnce(ctx); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for rt.blocked.Load() == 0 || clk.Waiters() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the status call did not start")
		}
		runtime.Gosched()
	}
	clk.Step(2 * time.Second)
	for m.check() == errNotReady {
		if time.Now().After(deadline) {
			t.Fatal("no verdict after the timeout")
		}
		runtime.Gosched()
	}
	if err := m.check(); err == nil || !strings.Contains(err.Error(), "did not answer a status check within 2s") {
		t.Fatalf("check() = %v, want the timeout", err)
	}
	rt.release()
	<-done
}

// TestNetworkNotReadyIsApartFromHealth checks the kubelet's network state:
// NetworkReady=false gives the runtime's reason and message as the node's
// readiness error while the "runtime" health check passes, a failed status
// call keeps the last answer, and a ready network clears it; each change
// is signalled once.
func TestNetworkNotReadyIsApartFromHealth(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	rt := &fakeRuntime{}
	logs := &logLines{}
	m := newRuntimeMonitor(rt, clk, funcr.New(logs.add, funcr.Options{}), 5*time.Second, 2*time.Second)
	set := func(net string, err error) {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		rt.netDown, rt.statusErr = net, err
	}
	drain := func() int {
		n := 0
		for len(m.changed) > 0 {
			<-m.changed
			n++
		}
		return n
	}
	const down = "NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"
	steps := []struct {
		name       string
		net        string
		statusErr  error
		wantNet    string
		wantHealth bool
		signals    int
	}{
		{"ready", "", nil, "", true, 1},
		{"network not ready", down, nil, "container runtime network not ready: " + down, true, 1},
		{"still not ready: no new signal", down, nil, "container runtime network not ready: " + down, true, 0},
		{"status fails: network as last answered", "", errBoom, "container runtime network not ready: " + down, false, 1},
		{"answers again with the network back", "", nil, "", true, 1},
	}
	for _, s := range steps {
		set(s.net, s.statusErr)
		m.checkOnce(context.Background())
		got := ""
		if err := m.networkCheck(); err != nil {
			got = err.Error()
		}
		if got != s.wantNet {
			t.Errorf("%s: networkCheck() = %q, want %q", s.name, got, s.wantNet)
		}
		if healthy := m.check() == nil; healthy != s.wantHealth {
			t.Errorf("%s: runtime check healthy = %v, want %v", s.name, healthy, s.wantHealth)
		}
		if n := drain(); n != s.signals {
			t.Errorf("%s: %d change signals, want %d", s.name, n, s.signals)
		}
	}
	if n := logs.count("Container runtime network not ready"); n != 1 {
		t.Errorf("%d 'network not ready' lines, want 1", n)
	}
}
