package abtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/managers/eviction"
	"github.com/nodekit/nodekit/pleg"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/sim"
)

// runs numbers the runs of this process, for their node names.
var runs atomic.Int64

// Result is one variant's measurements.
type Result struct {
	// Variant names the variant.
	Variant string
	// Kind is the PLEG the run built.
	Kind pleg.Kind
	// Starts are how long after the agent started each pod's first
	// container started, shortest first; HighStarts those of the
	// high-priority pods.
	Starts, HighStarts []time.Duration
	// Refused counts the pods admission refused (Failed, with the message
	// "Pod was rejected: ..."), by the end of the window.
	Refused int
	// Evicted counts the pods the eviction manager evicted (Failed with
	// reason eviction.Reason, "Evicted"), by the end of the window.
	Evicted int
	// RSS is the process's resident set size at the end of the window.
	RSS int64
	// StartTime is how long every pod took to run.
	StartTime time.Duration
	// Window is the measurement window.
	Window time.Duration
	// Stages are the detection latencies, shortest first; Stages.Wake is
	// from a container's exit (its FinishedAt) to its pod worker being woken
	// with a status that shows it.
	Stages Stages
	// CPU is the process's CPU time during the window.
	CPU time.Duration
	// CRICalls and ReadCalls are the agent's CRI calls per minute during
	// the window: all of them, and those that read state (list and status
	// calls). PLEGCalls are those the PLEG made.
	CRICalls, ReadCalls, PLEGCalls float64
	// Missed, Events and Inspections are the evented PLEG's missed events,
	// events received and GetPodStatus calls during the window; Missed is
	// -1 for another PLEG.
	Missed, Events, Inspections float64
	// Relists counts the evented PLEG's relists by reason.
	Relists map[string]float64
}

// runVariant runs the workload under one variant: it starts an agent,
// waits until every pod runs (or was refused or evicted), measures for the
// workload's duration, then stops the agent and removes its pods.
func runVariant(ctx context.Context, w Workload, v Variant, log logr.Logger) (Result, error) {
	node := fmt.Sprintf("abtest-%d-%d", os.Getpid(), runs.Add(1))
	dir := filepath.Join(w.RootDir, node)
	manifests := filepath.Join(dir, "manifests")
	if err := w.writeManifests(manifests); err != nil {
		return Result{}, err
	}
	cfg := nodekit.DefaultConfig()
	cfg.NodeName, cfg.RootDir, cfg.Manifests = node, filepath.Join(dir, "root"), manifests
	cfg.Runtime, cfg.RuntimeEndpoint = runtimeName(w), w.Endpoint
	cfg.CRI.CgroupParent, cfg.CRI.InitialBackOff = w.CgroupParent, w.BackOff
	cfg.Server.Port = 0
	cfg.Agent.ContainerGCPeriod = w.GCPeriod
	if w.SandboxLatency > 0 {
		cfg.Sim.Latency = map[string]sim.Latency{"RunPodSandbox": {Fixed: w.SandboxLatency}}
	}
	rec := newWakeRecorder()
	counted := &countingRuntime{rec: rec}
	var (
		gatherer prometheus.Gatherer
		a        *agent.Agent
		rt       noderuntime.Runtime
	)
	opts := append([]fx.Option{nodekit.Defaults(), fx.Decorate(rec.wrap, counted.swap), fx.Populate(&gatherer, &a, &rt)}, v.options(w)...)
	app := nodekit.New(cfg, log, opts...)
	startCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	begin := time.Now()
	if err := app.Start(startCtx); err != nil {
		return Result{}, fmt.Errorf("start agent: %w", err)
	}
	defer cleanup(app, rt)
	kind := counted.kind
	r := Result{Variant: v.Name, Kind: kind, Window: w.Duration, Missed: -1}
	if err := waitRunning(ctx, a, w.Pods, w.StartTimeout, begin, &r); err != nil {
		return r, err
	}
	r.StartTime = time.Since(begin)
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		rec.watch(klog.NewContext(watchCtx, logr.Discard()), counted.events)
	}()
	defer func() { stopWatch(); <-watched }()
	from := time.Now()
	rec.window(from, from.Add(w.Duration))
	cpu0, m0, p0 := cpuTime(), snapshot(gatherer), counted.calls.Load()
	select {
	case <-ctx.Done():
		return r, ctx.Err()
	case <-time.After(w.Duration):
	}
	cpu1, m1, p1 := cpuTime(), snapshot(gatherer), counted.calls.Load()
	minutes := w.Duration.Minutes()
	r.Stages = rec.stages()
	c := countPods(a.GetPods())
	r.Refused, r.Evicted = c.refused, c.evicted
	r.RSS = rss()
	r.CPU = cpu1 - cpu0
	r.CRICalls, r.ReadCalls = (m1.criCalls-m0.criCalls)/minutes, (m1.readCalls-m0.readCalls)/minutes
	r.PLEGCalls = float64(p1-p0) / minutes
	if kind == pleg.KindEvented {
		r.Missed, r.Events, r.Inspections = m1.missed-m0.missed, m1.events-m0.events, m1.inspections-m0.inspections
		r.Relists = map[string]float64{}
		for reason, n := range m1.relists {
			r.Relists[reason] = n - m0.relists[reason]
		}
	}
	return r, nil
}

// waitRunning waits until each of n pods runs or was refused or evicted,
// and records in r when each pod was first seen Running (polling every
// 20ms, from begin: CRI start times have a second's resolution).
func waitRunning(ctx context.Context, a *agent.Agent, n int, timeout time.Duration, begin time.Time, r *Result) error {
	deadline := time.Now().Add(timeout)
	seen := map[types.UID]bool{}
	for {
		now := time.Since(begin)
		pods := a.GetPods()
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && !seen[p.UID] {
				seen[p.UID] = true
				r.Starts = append(r.Starts, now)
				if Priority(p) >= HighPriority {
					r.HighStarts = append(r.HighStarts, now)
				}
			}
		}
		c := countPods(pods)
		if len(seen)+c.refused+c.evicted >= n {
			slices.Sort(r.Starts)
			slices.Sort(r.HighStarts)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d pods run (%d refused, %d evicted) after %v", len(seen), n, c.refused, c.evicted, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// podCounts are the pods that ended Failed, by cause.
type podCounts struct{ refused, evicted int }

// countPods counts the pods admission refused (the agent's "Pod was
// rejected: " message) and those the eviction manager evicted (reason
// eviction.Reason).
func countPods(pods []*corev1.Pod) podCounts {
	var c podCounts
	for _, p := range pods {
		switch {
		case p.Status.Phase != corev1.PodFailed:
		case strings.HasPrefix(p.Status.Message, "Pod was rejected: "):
			c.refused++
		case p.Status.Reason == eviction.Reason:
			c.evicted++
		}
	}
	return c
}

// cleanup stops the agent and removes every pod it created.
func cleanup(app *fx.App, rt noderuntime.Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var errs []error
	if err := app.Stop(ctx); err != nil {
		errs = append(errs, err)
	}
	pods, err := rt.GetPods(ctx, true)
	errs = append(errs, err)
	grace := int64(0)
	for _, p := range pods {
		errs = append(errs, rt.KillPod(ctx, nil, p, &grace))
	}
	if gc, ok := rt.(noderuntime.GarbageCollector); ok {
		errs = append(errs, gc.GarbageCollect(ctx, func(types.UID) bool { return true }))
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, "abtest: cleanup:", err)
	}
}
