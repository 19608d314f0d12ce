package abtest_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.uber.org/fx"

	"github.com/nodekit/nodekit/abtest"
	"github.com/nodekit/nodekit/agent/admission"
)

// An embedder's own A/B command: the built-in swaps plus admission=label,
// a handler refusing pods labelled ab-deny, compared with
//
//	go run . --a admission=default --b admission=label --pods 50 --duration 30s
func Example() {
	h := abtest.New()
	h.Name = "myab"
	err := h.Register("admission", "label", func(abtest.Workload) []fx.Option {
		return []fx.Option{abtest.AdmissionHandler(admission.HandlerFunc(func(a *admission.Attributes) admission.Result {
			if _, ok := a.Pod.Labels[abtest.DenyLabel]; ok {
				return admission.Refused("Labelled", "the pod is labelled "+abtest.DenyLabel)
			}
			return admission.Admitted()
		}))}
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(h.Main(os.Args[1:]))
}

// A program that wants the figures rather than the table.
func ExampleHarness_Run() {
	w := abtest.DefaultWorkload()
	w.Pods, w.Duration = 20, 30*time.Second
	rep, err := abtest.New().Run(context.Background(), w, []string{"pleg=generic", "pleg=evented"})
	if err != nil {
		panic(err)
	}
	for _, r := range rep.Results {
		fmt.Printf("%s: start p50 %v, exit detected after %v (p50), %.0f CRI calls/min\n", r.Variant,
			abtest.Percentile(r.Starts, 0.5), abtest.Percentile(r.Stages.Wake, 0.5), r.CRICalls)
	}
}
