package settle

import (
	"bytes"
	"runtime"
	"time"
)

// OthersBusy reports whether a goroutine other than the caller is running,
// runnable or in a system call (file I/O), from a dump of all goroutines
// written into *buf. A goroutine blocked in os/signal's receive loop, which
// sits in a system call for good, does not count.
func OthersBusy(buf *[]byte) bool {
	if len(*buf) == 0 {
		*buf = make([]byte, 64<<10)
	}
	for {
		n := runtime.Stack(*buf, true)
		if n < len(*buf) {
			*buf = (*buf)[:n]
			break
		}
		*buf = make([]byte, 2*len(*buf))
	}
	dump := *buf
	defer func() { *buf = (*buf)[:cap(*buf)] }()
	// The first goroutine in the dump is the caller.
	first := true
	for len(dump) > 0 {
		var line []byte
		line, dump, _ = bytes.Cut(dump, []byte("\n"))
		state, ok := goroutineState(line)
		if !ok {
			continue
		}
		if first {
			first = false
			continue
		}
		switch string(state) {
		case "running", "runnable", "preempted", "copystack":
			return true
		case "syscall":
			top, _, _ := bytes.Cut(dump, []byte("\n"))
			if !bytes.HasPrefix(top, []byte("os/signal.signal_recv")) {
				return true
			}
		}
	}
	return false
}

// goroutineState parses "goroutine 7 [chan receive, 2 minutes]:" into
// "chan receive".
func goroutineState(line []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(line, []byte("goroutine "))
	if !ok {
		return nil, false
	}
	_, rest, ok = bytes.Cut(rest, []byte(" ["))
	if !ok {
		return nil, false
	}
	state, _, ok := bytes.Cut(rest, []byte("]"))
	if !ok {
		return nil, false
	}
	state, _, _ = bytes.Cut(state, []byte(","))
	return state, true
}

// Wait yields until, twice in a row, no goroutine other than the caller
// is busy (OthersBusy), and returns true; it returns false when that does
// not happen before limit of real time has passed. buf holds the last
// goroutine dump, for the caller's failure message.
func Wait(buf *[]byte, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for idle := 0; idle < 2; {
		runtime.Gosched()
		if OthersBusy(buf) {
			idle = 0
		} else {
			idle++
		}
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}
