package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/pleg"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// SnapshotPLEG is a user-written PLEG in one file: every period it inspects
// every pod, fingerprints its containers and tells the agent about pods whose
// fingerprint changed. It trades the generic PLEG's per-container diff for a
// simpler rule, the kind of change a researcher swaps in to measure.
type SnapshotPLEG struct {
	rt     noderuntime.Runtime
	cache  *pleg.Cache
	clk    clock.WithTicker
	log    logr.Logger
	period time.Duration
	events chan *pleg.Event
	prints map[types.UID]string // used by Run's goroutine only
	last   atomic.Int64         // unix nanos of the last inspection
}

var _ pleg.Interface = (*SnapshotPLEG)(nil)

// NewSnapshotPLEG returns a SnapshotPLEG that inspects the runtime every period.
func NewSnapshotPLEG(rt noderuntime.Runtime, cache *pleg.Cache, clk clock.WithTicker, log logr.Logger, period time.Duration) *SnapshotPLEG {
	return &SnapshotPLEG{rt: rt, cache: cache, clk: clk, log: log.WithName("snapshot-pleg"),
		period: period, events: make(chan *pleg.Event, 1000), prints: map[types.UID]string{}}
}

// Run inspects the runtime every period until ctx ends.
func (p *SnapshotPLEG) Run(ctx context.Context) error {
	ticker := p.clk.NewTicker(p.period)
	defer ticker.Stop()
	for {
		p.relist(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		}
	}
}

// Watch returns the event channel.
func (p *SnapshotPLEG) Watch() <-chan *pleg.Event { return p.events }

// LastInspection returns when the runtime was last inspected; zero before
// the first time.
func (p *SnapshotPLEG) LastInspection() time.Time {
	if n := p.last.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// Healthy is false when no inspection finished in ten periods.
func (p *SnapshotPLEG) Healthy() (bool, error) {
	last := p.LastInspection()
	if since := p.clk.Since(last); !last.IsZero() && since > 10*p.period {
		return false, fmt.Errorf("snapshot pleg last inspected the runtime %s ago", since)
	}
	return true, nil
}

func (p *SnapshotPLEG) relist(ctx context.Context) {
	now := p.clk.Now()
	pods, err := p.rt.GetPods(ctx, true)
	if err != nil {
		p.log.Error(err, "Could not list pods")
		return
	}
	seen := map[types.UID]bool{}
	for _, pod := range pods {
		seen[pod.ID] = true
		print := fingerprint(pod)
		if print == p.prints[pod.ID] {
			continue
		}
		status, err := p.rt.GetPodStatus(ctx, pod.ID, pod.Name, pod.Namespace)
		p.cache.Set(pod.ID, status, err, now)
		if err != nil {
			continue // inspect again next time
		}
		p.prints[pod.ID] = print
		p.events <- &pleg.Event{ID: pod.ID, Type: pleg.PodSync}
	}
	for uid := range p.prints {
		if !seen[uid] {
			delete(p.prints, uid)
			p.cache.Delete(uid)
			p.events <- &pleg.Event{ID: uid, Type: pleg.PodSync}
		}
	}
	// Waking workers that wait on unchanged pods is part of the Cache contract.
	p.cache.UpdateTime(now)
	p.last.Store(now.UnixNano())
}

func fingerprint(pod *noderuntime.Pod) string {
	var parts []string
	for _, c := range append(append([]*noderuntime.Container{}, pod.Sandboxes...), pod.Containers...) {
		parts = append(parts, c.ID.ID+"="+string(c.State))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
