package stats

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

// listFailureKey is the failure log's key of the list calls' own failure
// (sandbox IDs are 64 hex digits, so it never collides).
const listFailureKey = "list"

// failureLog remembers, per key (a pod sandbox, or the list call), the last
// stats error logged, so that a pod whose stats keep failing is logged once
// and again only when its error changes, not on every scrape. Safe for
// concurrent use.
type failureLog struct {
	mu   sync.Mutex
	last map[string]string
}

// failed records err under key and reports whether it should be logged: it
// is the key's first failure, or its message differs from the last one.
func (f *failureLog) failed(key string, err error) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	msg := err.Error()
	if last, ok := f.last[key]; ok && last == msg {
		return false
	}
	f.last[key] = msg
	return true
}

// succeeded forgets key's failure and reports whether it had one, so that
// a later failure is logged again.
func (f *failureLog) succeeded(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, had := f.last[key]
	delete(f.last, key)
	return had
}

// prune forgets the failures of the sandboxes not in keep (pods that are
// gone); the list call's own entry stays.
func (f *failureLog) prune(keep map[string]*podInput) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.last {
		if _, ok := keep[k]; !ok && k != listFailureKey {
			delete(f.last, k)
		}
	}
}

// runtimeStats fills the inputs' pod stats from ListPodSandboxStats. When
// that call fails for the whole list (containerd fails it when one sandbox
// has no cgroup parent), each pod's stats are read on their own, so that
// one bad sandbox costs only its pod. A runtime that does not implement
// ListPodSandboxStats gets ListContainerStats (again read one container at
// a time when the list fails).
func (p *CRI) runtimeStats(ctx context.Context, sel map[string]string, inputs map[string]*podInput, r *round) error {
	ctx = p.quietCRI(ctx)
	ps, err := p.rs.ListPodSandboxStats(ctx, &runtimeapi.PodSandboxStatsFilter{LabelSelector: sel})
	if err == nil {
		p.listSucceeded()
		for _, s := range ps {
			if in := inputs[s.GetAttributes().GetId()]; in != nil {
				in.stats = s
			}
		}
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("list pod sandbox stats: %w", err)
	}
	r.cstats = map[string]*runtimeapi.ContainerStats{}
	if status.Code(err) != codes.Unimplemented {
		if p.failures.failed(listFailureKey, err) {
			p.log.Error(err, "cannot list pod sandbox stats, reading each pod's stats on its own")
		}
		return p.eachPodStats(ctx, inputs, r)
	}
	cs, err := p.rs.ListContainerStats(ctx, &runtimeapi.ContainerStatsFilter{LabelSelector: sel})
	if err == nil || status.Code(err) == codes.Unimplemented {
		p.listSucceeded()
		for _, s := range cs {
			r.cstats[s.GetAttributes().GetId()] = s
		}
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("list container stats: %w", err)
	}
	if p.failures.failed(listFailureKey, err) {
		p.log.Error(err, "cannot list container stats, reading each container's stats on its own")
	}
	for _, in := range inputs {
		p.eachContainerStats(ctx, in, r)
	}
	return nil
}

// quietCRI gives the CRI client (k8s.io/cri-client, which logs every
// failed call as an error through the context's logger, else klog's global
// one) the provider's logger at V(4), its errors included: the provider
// logs the stats failures itself, once per pod, so that a sandbox whose
// stats always fail does not log on every scrape.
func (p *CRI) quietCRI(ctx context.Context) context.Context {
	return klog.NewContext(ctx, logr.New(demotedSink{log: p.log.WithName("cri-client")}))
}

// demotedSink writes every line, errors included, to log at V(4) and up.
type demotedSink struct{ log logr.Logger }

func (d demotedSink) Init(logr.RuntimeInfo) {}

func (d demotedSink) Enabled(level int) bool { return d.log.V(4 + level).Enabled() }

func (d demotedSink) Info(level int, msg string, kv ...any) { d.log.V(4+level).Info(msg, kv...) }

func (d demotedSink) Error(err error, msg string, kv ...any) {
	if err != nil {
		kv = append(kv, "err", err.Error())
	}
	d.log.V(4).Info(msg, kv...)
}

func (d demotedSink) WithValues(kv ...any) logr.LogSink {
	return demotedSink{log: d.log.WithValues(kv...)}
}

func (d demotedSink) WithName(name string) logr.LogSink {
	return demotedSink{log: d.log.WithName(name)}
}

// listSucceeded forgets a failure of the list calls, so that the next one
// is logged.
func (p *CRI) listSucceeded() {
	if p.failures.succeeded(listFailureKey) {
		p.log.Info("pod stats are listed again")
	}
}

// eachPodStats reads each pod's stats with PodSandboxStats. A pod whose
// call fails gets its containers' stats from ContainerStats and is marked
// failed (left out when nothing at all is measured for it); its failure is
// logged once until its error changes. It fails only when ctx ends.
func (p *CRI) eachPodStats(ctx context.Context, inputs map[string]*podInput, r *round) error {
	for id, in := range inputs {
		s, err := p.rs.PodSandboxStats(ctx, id)
		if err == nil {
			in.stats = s
			p.failures.succeeded(id)
			continue
		}
		if ctx.Err() != nil {
			return fmt.Errorf("pod sandbox %s stats: %w", id, err)
		}
		in.failed = true
		measured := p.eachContainerStats(ctx, in, r)
		if p.failures.failed(id, err) {
			md := in.sandbox.GetMetadata()
			p.log.Error(err, "cannot read a pod's sandbox stats, reporting what its containers' stats give",
				"pod", md.GetNamespace()+"/"+md.GetName(), "podSandboxID", id,
				"containers", len(in.containers), "containersMeasured", measured)
		}
	}
	return nil
}

// eachContainerStats reads the pod's containers' stats one at a time into
// r.cstats and returns how many it got; a container whose call fails is
// left without runtime stats (its cgroup may still fill them).
func (p *CRI) eachContainerStats(ctx context.Context, in *podInput, r *round) int {
	n := 0
	for _, c := range in.containers {
		s, err := p.rs.ContainerStats(ctx, c.GetId())
		if err != nil {
			p.log.V(4).Info("cannot read container stats", "containerID", c.GetId(), "err", err.Error())
			continue
		}
		r.cstats[c.GetId()] = s
		n++
	}
	return n
}
