package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// seenAnnotation is the first-seen time both agents stamp on a pod from a
// source and pass on to its sandbox's annotations.
const seenAnnotation = "kubernetes.io/config.seen"

// startup is the per-pod start-up of one run: for each pod, from its
// arrival (the agent's config.seen stamp on the sandbox; the process start
// when the sandbox lacks it) to the benchmark seeing its container running
// over CRI, and the part of it spent in the runtime, from the sandbox's
// creation to the container's start as containerd records them (the
// RunPodSandbox, CreateContainer and StartContainer calls, with whatever
// the agent did between them).
type startup struct {
	total, cri, agent quantiles // arrival to running; in the runtime; total minus runtime, per pod
	// own is the agent's own part per pod: the rest less the pod's wait
	// for a start slot before its sandbox. ownKnown is false when those
	// waits are unknown (nodekit with a bound but below --v=2).
	own      quantiles
	ownKnown bool
}

// quantiles are the p50, p99, max and mean of a set of durations.
type quantiles struct{ p50, p99, max, mean time.Duration }

func quantilesOf(ds []time.Duration) quantiles {
	if len(ds) == 0 {
		return quantiles{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration {
		i := int(q*float64(len(s))+0.999999) - 1 // nearest rank
		return s[min(max(i, 0), len(s)-1)]
	}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return quantiles{p50: at(0.50), p99: at(0.99), max: s[len(s)-1], mean: sum / time.Duration(len(s))}
}

func (q quantiles) String() string {
	return fmt.Sprintf("p50 %.2fs p99 %.2fs max %.2fs mean %.2fs", q.p50.Seconds(), q.p99.Seconds(), q.max.Seconds(), q.mean.Seconds())
}

// ownString is the agent's own part per pod, or "unknown".
func (s startup) ownString() string {
	if !s.ownKnown {
		return "unknown"
	}
	return s.own.String()
}

// runningTracker remembers when each benchmark pod's container was first
// seen running.
type runningTracker map[string]time.Time

// note records the pods of names not seen running before as running at t.
func (r runningTracker) note(names []string, t time.Time) {
	for _, n := range names {
		if _, ok := r[n]; !ok {
			r[n] = t
		}
	}
}

// measureStartup reads every benchmark pod's sandbox and container from
// the runtime and computes the run's start-up figures; started is the
// agent process's start, the arrival of pods whose sandbox has no
// config.seen. sandboxWaits holds each pod's wait for a start slot before
// its sandbox, by name (none: no wait); nil means unknown.
func measureStartup(ctx context.Context, rt *runtime, seenRunning runningTracker, started time.Time, sandboxWaits map[string]time.Duration) (startup, error) {
	sbs, err := rt.rs.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{
		State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}})
	if err != nil {
		return startup{}, fmt.Errorf("list sandboxes: %w", err)
	}
	type sandbox struct {
		created, seen time.Time
	}
	byID := map[string]sandbox{}
	for _, sb := range sbs {
		if !strings.HasPrefix(sb.GetMetadata().GetName(), "pb-") {
			continue
		}
		s := sandbox{created: time.Unix(0, sb.CreatedAt), seen: started}
		if t, err := time.Parse(time.RFC3339Nano, sb.Annotations[seenAnnotation]); err == nil {
			s.seen = t
		}
		byID[sb.Id] = s
	}
	cs, err := rt.rs.ListContainers(ctx, &runtimeapi.ContainerFilter{
		State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}})
	if err != nil {
		return startup{}, fmt.Errorf("list containers: %w", err)
	}
	var total, cri, agent, own []time.Duration
	for _, c := range cs {
		name := c.Labels[podNameLabel]
		sb, ok := byID[c.PodSandboxId]
		running, seen := seenRunning[name]
		if !ok || !seen || c.Labels[containerNameLabel] != "main" {
			continue
		}
		st, err := rt.rs.ContainerStatus(ctx, c.Id, false)
		if err != nil {
			return startup{}, fmt.Errorf("status of container %s: %w", c.Id, err)
		}
		inRuntime := time.Unix(0, st.GetStatus().GetStartedAt()).Sub(sb.created)
		t := running.Sub(sb.seen)
		total, cri, agent = append(total, t), append(cri, inRuntime), append(agent, t-inRuntime)
		own = append(own, t-inRuntime-sandboxWaits[name])
	}
	if len(total) == 0 {
		return startup{}, fmt.Errorf("no running benchmark pod to measure")
	}
	s := startup{total: quantilesOf(total), cri: quantilesOf(cri), agent: quantilesOf(agent), ownKnown: sandboxWaits != nil}
	if s.ownKnown {
		s.own = quantilesOf(own)
	}
	return s, nil
}
