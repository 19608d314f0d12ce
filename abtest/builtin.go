package abtest

import (
	"sort"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/agent/admission"
	"github.com/nodekit/nodekit/pleg"
)

// Builtin is one of the swaps New registers.
type Builtin struct {
	// Key and Value name the swap: Key=Value in a variant spec.
	Key, Value string
	// Doc says what it swaps.
	Doc string
	// Swap makes it.
	Swap Swap
}

// Builtins are the swaps every harness has:
//
//	pleg=generic|evented       the PLEG (pleg.Config.Kind)
//	start=fifo|priority        the agent's StartGate: agent.FIFOStart, or
//	                           highest spec.priority first with at most
//	                           Workload.MaxStarting pods starting at once
//	admission=default|deny     the admission chain: the defaults, or the
//	                           defaults and a handler refusing the pods the
//	                           workload labels DenyLabel (every DenyEvery'th)
func Builtins() []Builtin {
	return []Builtin{
		{"pleg", string(pleg.KindGeneric), "the generic (relisting) PLEG", plegKind(pleg.KindGeneric)},
		{"pleg", string(pleg.KindEvented), "the evented PLEG (CRI container events)", plegKind(pleg.KindEvented)},
		{"start", "fifo", "the agent's default, agent.FIFOStart: every pod handed over at once, oldest first",
			func(Workload) []fx.Option { return nil }},
		{"start", "priority", "highest spec.priority first, at most MaxStarting starting at once", func(w Workload) []fx.Option {
			gate := priorityGate{maxStarting: w.MaxStarting}
			return []fx.Option{fx.Decorate(func(agent.StartGate) agent.StartGate { return gate })}
		}},
		{"admission", "default", "the default admission chain", func(Workload) []fx.Option { return nil }},
		{"admission", "deny", "the defaults and a handler refusing pods labelled " + DenyLabel, func(Workload) []fx.Option {
			return []fx.Option{AdmissionHandler(admission.HandlerFunc(denyLabelled))}
		}},
	}
}

// AdmissionHandler is the fx option that adds h to the agent's admission
// chain, after the defaults: what an embedder's admission swap returns.
func AdmissionHandler(h admission.Handler) fx.Option {
	return fx.Provide(fx.Annotate(func() admission.Handler { return h }, fx.ResultTags(`group:"admission"`)))
}

// plegKind is the swap that builds the PLEG of kind k.
func plegKind(k pleg.Kind) Swap {
	return func(Workload) []fx.Option {
		return []fx.Option{fx.Decorate(func(c pleg.Config) pleg.Config { c.Kind = k; return c })}
	}
}

// DenyLabel marks the pods admission=deny refuses (every DenyEvery'th pod
// of the workload carries it).
const DenyLabel = "ab-deny"

func denyLabelled(attrs *admission.Attributes) admission.Result {
	if _, ok := attrs.Pod.Labels[DenyLabel]; ok {
		return admission.Refused("Denied", "the pod is labelled "+DenyLabel)
	}
	return admission.Admitted()
}

// priorityGate starts the highest spec.priority first, at most maxStarting
// pods starting at once (examples/priority-start is the same gate).
type priorityGate struct{ maxStarting int }

func (g priorityGate) Order(pods []*corev1.Pod) {
	agent.FIFOStart{}.Order(pods)
	sort.SliceStable(pods, func(i, j int) bool { return Priority(pods[i]) > Priority(pods[j]) })
}

func (g priorityGate) Ready(waiting []*corev1.Pod, s agent.StartState) []*corev1.Pod {
	g.Order(waiting)
	if g.maxStarting <= 0 {
		return waiting
	}
	return waiting[:max(0, min(len(waiting), g.maxStarting-len(s.Starting)))]
}

// Priority is the pod's spec.priority, 0 when unset.
func Priority(p *corev1.Pod) int32 {
	if p.Spec.Priority == nil {
		return 0
	}
	return *p.Spec.Priority
}
