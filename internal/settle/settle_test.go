package settle

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestOthersBusy(t *testing.T) {
	var buf []byte
	block := make(chan struct{})
	blocked := make(chan struct{})
	go func() {
		close(blocked)
		<-block
	}()
	<-blocked
	// The blocked goroutine must not count once it has parked.
	deadline := time.Now().Add(10 * time.Second)
	for OthersBusy(&buf) {
		if time.Now().After(deadline) {
			t.Fatalf("a goroutine blocked on a channel counts as busy:\n%s", buf)
		}
		runtime.Gosched()
	}
	var stop atomic.Bool
	spinning := make(chan struct{})
	go func() {
		close(spinning)
		for !stop.Load() {
		}
	}()
	<-spinning
	if !OthersBusy(&buf) {
		t.Error("a spinning goroutine does not count as busy")
	}
	stop.Store(true)
	close(block)
}

func TestGoroutineState(t *testing.T) {
	for line, want := range map[string]string{
		"goroutine 7 [chan receive, 2 minutes]:":      "chan receive",
		"goroutine 1 [running, locked to thread]:":    "running",
		"goroutine 12 [select]:":                      "select",
		"\tgithub.com/nodekit/nodekit/agent.(*Agent)": "",
	} {
		got, ok := goroutineState([]byte(line))
		if string(got) != want || ok != (want != "") {
			t.Errorf("goroutineState(%q) = %q, %v", line, got, ok)
		}
	}
}

func TestWaitReturnsOnceOthersBlockAndGivesUpOnASpinner(t *testing.T) {
	var buf []byte
	block := make(chan struct{})
	go func() { <-block }()
	if !Wait(&buf, 10*time.Second) {
		t.Fatalf("Wait gave up with only a blocked goroutine:\n%s", buf)
	}
	var stop atomic.Bool
	go func() {
		for !stop.Load() {
		}
	}()
	if Wait(&buf, 50*time.Millisecond) {
		t.Error("Wait returned true while a goroutine spins")
	}
	stop.Store(true)
	close(block)
}
