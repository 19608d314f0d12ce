package startgatetest_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/agent/startgatetest"
)

func TestFIFOStartPassesTheSuite(t *testing.T) {
	startgatetest.Suite(t, func() agent.StartGate { return agent.FIFOStart{} })
}

// gate is a StartGate made of two functions.
type gate struct {
	order func([]*corev1.Pod)
	ready func([]*corev1.Pod, agent.StartState) []*corev1.Pod
}

func (g gate) Order(p []*corev1.Pod) { g.order(p) }
func (g gate) Ready(w []*corev1.Pod, s agent.StartState) []*corev1.Pod {
	return g.ready(w, s)
}

func TestTheSuiteFailsBrokenGates(t *testing.T) {
	fifo := agent.FIFOStart{}
	broken := map[string]gate{
		"one whose Order repeats the first pod": {func(p []*corev1.Pod) {
			if len(p) > 1 {
				p[1] = p[0]
			}
		}, fifo.Ready},
		"one that never lets a pod go": {fifo.Order, func([]*corev1.Pod, agent.StartState) []*corev1.Pod { return nil }},
		"one that returns the waiting pods twice": {fifo.Order, func(w []*corev1.Pod, _ agent.StartState) []*corev1.Pod {
			return append(append([]*corev1.Pod(nil), w...), w...)
		}},
		"one that labels the pods it orders": {func(p []*corev1.Pod) {
			for _, pod := range p {
				pod.Labels = map[string]string{"seen": "yes"}
			}
		}, fifo.Ready},
		"one that never lets the last pod go": {fifo.Order, func(w []*corev1.Pod, s agent.StartState) []*corev1.Pod {
			if s.Active > 1 && len(w) == s.Active {
				return w[1:] // holds the first back while others wait
			}
			if len(w) == 1 && len(s.Starting) == 0 {
				return nil // then never lets it go
			}
			return w
		}},
	}
	for name, g := range broken {
		if errs := startgatetest.Check(func() agent.StartGate { return g }); len(errs) == 0 {
			t.Errorf("the suite passed %s", name)
		} else {
			t.Logf("%s: %v", name, errs[0])
		}
	}
}
