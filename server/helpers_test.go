package server_test

import (
	"errors"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// podList is a PodLister over a fixed slice.
type podList []*corev1.Pod

func (l podList) GetPods() []*corev1.Pod { return l }

// check is a HealthCheck with a fixed result.
type check struct {
	name string
	err  error
}

func (c check) Name() string { return c.name }
func (c check) Check() error { return c.err }

func failing(name, reason string) check { return check{name: name, err: errors.New(reason)} }

// recorder is a logr sink that records messages and signals each one.
type recorder struct {
	mu   sync.Mutex
	msgs []string
	seen chan string
}

func newRecorder() *recorder { return &recorder{seen: make(chan string, 64)} }

func (r *recorder) logger() logr.Logger { return logr.New(r) }

func (r *recorder) record(msg string) {
	r.mu.Lock()
	r.msgs = append(r.msgs, msg)
	r.mu.Unlock()
	select {
	case r.seen <- msg:
	default:
	}
}

// waitFor blocks until msg is logged.
func (r *recorder) waitFor(msg string) {
	for m := range r.seen {
		if m == msg {
			return
		}
	}
}

func (r *recorder) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

func (r *recorder) Init(logr.RuntimeInfo)               {}
func (r *recorder) Enabled(int) bool                    { return true }
func (r *recorder) Info(_ int, msg string, _ ...any)    { r.record(msg) }
func (r *recorder) Error(_ error, msg string, _ ...any) { r.record(msg) }
func (r *recorder) WithValues(...any) logr.LogSink      { return r }
func (r *recorder) WithName(string) logr.LogSink        { return r }
