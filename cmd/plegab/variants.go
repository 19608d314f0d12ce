package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/agent/admission"
	"github.com/nodekit/nodekit/pleg"
)

// Variant is one side of an A/B run: the built-in swaps it makes. Its spec
// on the command line is comma-separated key=value pairs:
//
//	pleg=generic|evented       the PLEG (Config.PLEG.Kind)
//	start=fifo|priority        the agent's StartGate: FIFOStart, or highest
//	                           spec.priority first with at most
//	                           --max-starting pods starting at once
//	admission=default|deny     the admission chain: the defaults, or the
//	                           defaults then a handler refusing the pods the
//	                           workload labels ab-deny (every --deny-every'th)
//
// Keys left out keep the default (generic, fifo, default).
type Variant struct {
	// Name is the spec as given; it heads the variant's rows.
	Name      string
	PLEG      pleg.Kind
	Start     string
	Admission string
}

// variantKeys are the values each key accepts, the default first.
var variantKeys = map[string][]string{
	"pleg":      {string(pleg.KindGeneric), string(pleg.KindEvented)},
	"start":     {"fifo", "priority"},
	"admission": {"default", "deny"},
}

// ParseVariant parses a spec such as "pleg=evented,start=priority".
func ParseVariant(spec string) (Variant, error) {
	v := Variant{Name: spec, PLEG: pleg.KindGeneric, Start: "fifo", Admission: "default"}
	for _, kv := range strings.Split(spec, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(kv), "=")
		allowed, known := variantKeys[key]
		if !ok || !known {
			return v, fmt.Errorf("variant %q: %q is not one of pleg=, start=, admission=", spec, kv)
		}
		if !slices.Contains(allowed, value) {
			return v, fmt.Errorf("variant %q: %s=%s, want one of %s", spec, key, value, strings.Join(allowed, "|"))
		}
		switch key {
		case "pleg":
			v.PLEG = pleg.Kind(value)
		case "start":
			v.Start = value
		case "admission":
			v.Admission = value
		}
	}
	return v, nil
}

// options are the fx options of the variant's swaps (the PLEG is chosen by
// the configuration).
func (v Variant) options(w Workload) []fx.Option {
	var out []fx.Option
	if v.Start == "priority" {
		gate := priorityGate{maxStarting: w.MaxStarting}
		out = append(out, fx.Decorate(func(agent.StartGate) agent.StartGate { return gate }))
	}
	if v.Admission == "deny" {
		out = append(out, fx.Provide(fx.Annotate(func() admission.Handler { return admission.HandlerFunc(denyLabelled) },
			fx.ResultTags(`group:"admission"`))))
	}
	return out
}

// denyLabel marks the pods the deny admission refuses.
const denyLabel = "ab-deny"

func denyLabelled(attrs *admission.Attributes) admission.Result {
	if _, ok := attrs.Pod.Labels[denyLabel]; ok {
		return admission.Refused("Denied", "the pod is labelled "+denyLabel)
	}
	return admission.Admitted()
}

// priorityGate starts the highest spec.priority first, at most maxStarting
// pods starting at once (examples/priority-start is the same gate).
type priorityGate struct{ maxStarting int }

func (g priorityGate) Order(pods []*corev1.Pod) {
	agent.FIFOStart{}.Order(pods)
	sort.SliceStable(pods, func(i, j int) bool { return priorityOf(pods[i]) > priorityOf(pods[j]) })
}

func (g priorityGate) Ready(waiting []*corev1.Pod, s agent.StartState) []*corev1.Pod {
	g.Order(waiting)
	if g.maxStarting <= 0 {
		return waiting
	}
	return waiting[:max(0, min(len(waiting), g.maxStarting-len(s.Starting)))]
}

func priorityOf(p *corev1.Pod) int32 {
	if p.Spec.Priority == nil {
		return 0
	}
	return *p.Spec.Priority
}
