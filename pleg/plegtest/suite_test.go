package plegtest

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/pleg"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The suite itself is checked on PLEGs with known bugs: each must fail the
// case that looks for its bug, with a message naming it.
func TestSuiteCatchesBrokenPLEGs(t *testing.T) {
	tests := []struct {
		name     string
		caseName string
		plg      Factory
		want     string
	}{
		{
			name:     "a PLEG that advances the cache's time without looking (the kubelet's evented PLEG bug)",
			caseName: "a worker syncing on newer statuses sees its own actions and never duplicates a container",
			plg:      newEager,
			want:     "the runtime had it at rank",
		},
		{
			name:     "a PLEG that loses ContainerDied events",
			caseName: "every change reaches the agent after the cache holds it",
			plg:      newDeaf,
			want:     "the death of a container stopped from outside: not within",
		},
		{
			name:     "a PLEG whose statuses list a container twice",
			caseName: "every change reaches the agent after the cache holds it",
			plg:      newDoubling,
			want:     "twice",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c testCase
			for _, x := range cases() {
				if x.name == tt.caseName {
					c = x
				}
			}
			if c.run == nil {
				t.Fatalf("no case %q", tt.caseName)
			}
			r := &recorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				c.run(newHarness(r, SimBackend(), tt.plg, Options{KubeletEvents: true}))
			}()
			<-done
			msgs := r.messages()
			t.Logf("the case reported: %q", msgs)
			if !strings.Contains(strings.Join(msgs, "\n"), tt.want) {
				t.Errorf("the case reported %q, want a failure containing %q", msgs, tt.want)
			}
		})
	}
}

// recorder is a testing.TB that records failures instead of failing; its
// Fatal ends the calling goroutine as testing's does.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Helper() {}
func (r *recorder) add(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, msg)
}
func (r *recorder) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}
func (r *recorder) Errorf(format string, args ...any) { r.add(fmt.Sprintf(format, args...)) }
func (r *recorder) Error(args ...any)                 { r.add(fmt.Sprint(args...)) }
func (r *recorder) Fail()                             { r.add("Fail") }
func (r *recorder) Failed() bool                      { return len(r.messages()) > 0 }
func (r *recorder) Logf(string, ...any)               {}
func (r *recorder) FailNow()                          { r.add("FailNow"); runtime.Goexit() }
func (r *recorder) Fatal(args ...any)                 { r.add(fmt.Sprint(args...)); runtime.Goexit() }
func (r *recorder) Fatalf(format string, args ...any) {
	r.add(fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// eager is the generic PLEG, relisting every 3s, that also advances the
// cache's global timestamp to now every 100ms without looking at the
// runtime.
type eager struct {
	*pleg.Generic
	cache *pleg.Cache
	clk   clock.WithTicker
}

func newEager(env Env) pleg.Interface {
	g := pleg.NewGeneric(env.Runtime, env.Cache, env.Clock, nil, env.Log, pleg.Config{RelistPeriod: 3 * time.Second})
	return &eager{Generic: g, cache: env.Cache, clk: env.Clock}
}

func (p *eager) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.Generic.Run(ctx)
	}()
	t := p.clk.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			<-done
			return nil
		case <-t.C():
			p.cache.UpdateTime(p.clk.Now())
		}
	}
}

// deaf is the generic PLEG without its ContainerDied events.
type deaf struct {
	*pleg.Generic
	out chan *pleg.Event
}

func newDeaf(env Env) pleg.Interface {
	return &deaf{Generic: pleg.NewGeneric(env.Runtime, env.Cache, env.Clock, nil, env.Log, pleg.Config{}), out: make(chan *pleg.Event, 100)}
}

func (p *deaf) Watch() <-chan *pleg.Event { return p.out }

func (p *deaf) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.Generic.Run(ctx)
	}()
	for {
		select {
		case <-ctx.Done():
			<-done
			return nil
		case ev := <-p.Generic.Watch():
			if ev.Type != pleg.ContainerDied {
				p.out <- ev
			}
		}
	}
}

// doubling is a runtime whose pod statuses list each container twice.
type doubling struct{ noderuntime.Runtime }

func (d doubling) GetPodStatus(ctx context.Context, uid types.UID, name, namespace string) (*noderuntime.PodStatus, error) {
	s, err := d.Runtime.GetPodStatus(ctx, uid, name, namespace)
	if err == nil {
		s.ContainerStatuses = append(s.ContainerStatuses, s.ContainerStatuses...)
	}
	return s, err
}

func newDoubling(env Env) pleg.Interface {
	return pleg.NewGeneric(doubling{env.Runtime}, env.Cache, env.Clock, nil, env.Log, pleg.Config{})
}
