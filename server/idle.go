package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// idleWriter is a ResponseWriter whose hijacked connection is closed when
// no byte has passed either way for timeout: the streaming connection idle
// timeout of exec, attach and port-forward. Any traffic counts, SPDY and
// WebSocket pings included, as the streaming server's own idle timeout
// counts every frame.
type idleWriter struct {
	http.ResponseWriter
	clk     clock.WithDelayedExecution
	timeout time.Duration
}

// withIdleTimeout wraps w so that a connection it hands over by Hijack is
// closed after timeout without traffic.
func withIdleTimeout(w http.ResponseWriter, clk clock.Clock, timeout time.Duration) http.ResponseWriter {
	dc, ok := clk.(clock.WithDelayedExecution)
	if !ok {
		dc = clock.RealClock{}
	}
	return &idleWriter{ResponseWriter: w, clk: dc, timeout: timeout}
}

// Hijack implements http.Hijacker: the connection comes back wrapped, and
// its buffered reader and writer read and write through the wrapper.
func (w *idleWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the connection cannot be taken over (http.Hijacker)")
	}
	conn, brw, err := h.Hijack()
	if err != nil {
		return nil, nil, err
	}
	ic := &idleConn{Conn: conn}
	ic.timer = w.clk.AfterFunc(w.timeout, ic.expire)
	ic.reset = func() { ic.timer.Reset(w.timeout) }
	rw := bufio.NewReadWriter(bufio.NewReader(&touchReader{r: brw.Reader, c: ic}), bufio.NewWriter(ic))
	return ic, rw, nil
}

// Flush implements http.Flusher when the wrapped writer does.
func (w *idleWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the wrapped writer.
func (w *idleWriter) Unwrap() http.ResponseWriter {
	return w.ResponseWriter
}

// idleConn is a connection closed by its timer, which every read or write
// of at least a byte pushes back.
type idleConn struct {
	net.Conn
	timer clock.Timer
	reset func()

	mu      sync.Mutex
	expired bool
}

func (c *idleConn) touch(n int) {
	if n <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.expired {
		c.reset()
	}
}

// expire closes the connection once the timer fires.
func (c *idleConn) expire() {
	c.mu.Lock()
	c.expired = true
	c.mu.Unlock()
	_ = c.Conn.Close()
}

// Read implements net.Conn.
func (c *idleConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.touch(n)
	return n, err
}

// Write implements net.Conn.
func (c *idleConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.touch(n)
	return n, err
}

// Close implements net.Conn and stops the timer.
func (c *idleConn) Close() error {
	c.mu.Lock()
	c.expired = true
	c.timer.Stop()
	c.mu.Unlock()
	return c.Conn.Close()
}

// touchReader reads the bytes the server had buffered before the
// hijack, counting them as traffic.
type touchReader struct {
	r io.Reader
	c *idleConn
}

func (t *touchReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.c.touch(n)
	return n, err
}
