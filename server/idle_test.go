package server

import (
	"bufio"
	"context"
	"io"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestStreamingConnectionIdleTimeout: an exec whose connection carries no
// byte for the idle timeout is closed; traffic pushes the timeout back.
// The timeout runs on a fake clock; the test polls, never sleeps.
func TestStreamingConnectionIdleTimeout(t *testing.T) {
	for _, proto := range []string{"SPDY", "WebSocket"} {
		t.Run(proto, func(t *testing.T) { testStreamIdleTimeout(t, proto) })
	}
}

func testStreamIdleTimeout(t *testing.T, proto string) {
	const timeout = time.Minute
	clk := clocktesting.NewFakeClock(time.Now())
	_, base := streamFixtureWith(t, func(s *streams) { s.clk, s.idleTimeout = clk, timeout })

	u, _ := url.Parse(base + "/exec/ns/web/main?command=cat&input=1&output=1")
	var ex remotecommand.Executor
	var err error
	if proto == "SPDY" {
		ex, err = remotecommand.NewSPDYExecutor(&rest.Config{Host: base}, "POST", u)
	} else {
		ex, err = remotecommand.NewWebSocketExecutor(&rest.Config{Host: base}, "GET", u.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	defer inW.Close() // ends the client's stdin copy
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		done <- ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: inR, Stdout: outW})
		_ = outW.Close()
	}()
	out := bufio.NewReader(outR)
	echo := func(line string) {
		t.Helper()
		if _, err := inW.Write([]byte(line)); err != nil {
			t.Fatalf("write %q: %v", line, err)
		}
		for want := line; len(want) > 0; {
			b, err := out.ReadByte()
			if err != nil {
				t.Fatalf("read the echo of %q: %v", line, err)
			}
			if b == want[0] {
				want = want[1:]
			}
		}
	}
	echo("one\n")

	// 40s idle, traffic, 40s idle: 80s in all but never 60s without a byte.
	waitForTimer(t, clk)
	clk.Step(40 * time.Second)
	echo("two\n")
	clk.Step(40 * time.Second)
	echo("three\n")
	select {
	case err := <-done:
		t.Fatalf("the stream ended with traffic inside the idle timeout: %v", err)
	default:
	}

	// Past the timeout with no byte: the connection is closed. A ping of
	// the client between two steps pushes the timer back, so step again
	// until the stream ends.
	deadline := time.After(30 * time.Second)
	for {
		clk.Step(timeout + time.Second)
		select {
		case <-done:
			if proto == "WebSocket" {
				waitHeartbeatGone(t)
			}
			return
		case <-deadline:
			t.Fatal("the stream was not closed 30s after its idle timeout")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitForTimer polls until the idle timer is armed on clk.
func waitForTimer(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("no idle timer armed in 30s")
		}
		<-time.After(10 * time.Millisecond)
	}
}

// waitHeartbeatGone polls until client-go's WebSocket heartbeat goroutine
// has ended: after an abnormal closure it ends at its next ping (5s).
func waitHeartbeatGone(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(30 * time.Second)
	for strings.Contains(string(buf[:runtime.Stack(buf, true)]), "remotecommand.(*heartbeat).start") {
		if time.Now().After(deadline) {
			t.Fatal("the client's WebSocket heartbeat still runs 30s after the stream closed")
		}
		<-time.After(50 * time.Millisecond)
	}
}
