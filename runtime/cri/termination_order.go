package cri

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// terminationOrder makes a pod's sidecars stop after its regular containers,
// and each sidecar after the sidecars that follow it in the spec (the
// kubelet's termination ordering). It is safe for concurrent use by the
// goroutines of one KillPod.
type terminationOrder struct {
	// prereqs are, by container name, the channels to wait on before
	// stopping; built once, then only read.
	prereqs map[string][]chan struct{}

	mu sync.Mutex
	// done holds, by name, the channel closed once that running container
	// stopped.
	done map[string]chan struct{}
}

// hasSidecars reports whether the pod has a sidecar.
func hasSidecars(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.Spec.InitContainers, func(c corev1.Container) bool { return noderuntime.IsSidecar(&c) })
}

// newTerminationOrder builds the order for the pod, given the names of its
// containers that are being stopped; the others count as stopped already.
func newTerminationOrder(pod *corev1.Pod, running []string) *terminationOrder {
	o := &terminationOrder{prereqs: map[string][]chan struct{}{}, done: map[string]chan struct{}{}}
	channel := func(name string) chan struct{} {
		ch := make(chan struct{})
		if slices.Contains(running, name) {
			o.done[name] = ch
		} else {
			close(ch)
		}
		return ch
	}
	var regular []chan struct{}
	for i := range pod.Spec.Containers {
		regular = append(regular, channel(pod.Spec.Containers[i].Name))
	}
	var next chan struct{} // the sidecar after the current one
	for i := len(pod.Spec.InitContainers) - 1; i >= 0; i-- {
		c := &pod.Spec.InitContainers[i]
		if !noderuntime.IsSidecar(c) {
			continue
		}
		pre := slices.Clone(regular)
		if next != nil {
			pre = append(pre, next)
		}
		o.prereqs[c.Name] = pre
		next = channel(c.Name)
	}
	return o
}

// waitForTurn blocks until every container that name must outlive has
// stopped, deadline passes (on clk) or ctx ends.
func (o *terminationOrder) waitForTurn(ctx context.Context, clk clock.WithTicker, name string, deadline time.Time) {
	pre := o.prereqs[name]
	if len(pre) == 0 {
		return
	}
	left := deadline.Sub(clk.Now())
	if left <= 0 {
		return
	}
	timer := clk.NewTimer(left)
	defer timer.Stop()
	for _, ch := range pre {
		select {
		case <-ch:
		case <-timer.C():
			return
		case <-ctx.Done():
			return
		}
	}
}

// stopped records that the named container has stopped.
func (o *terminationOrder) stopped(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ch, ok := o.done[name]; ok {
		close(ch)
		delete(o.done, name)
	}
}
