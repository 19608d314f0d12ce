package runtimetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/internal/settle"
	"github.com/nodekit/nodekit/internal/suitekit"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Timing of the driver.
const (
	// fakeStep is how far the fake clock moves at a time.
	fakeStep = 10 * time.Millisecond
	// realPoll is the pause between two polls on the real clock.
	realPoll = 20 * time.Millisecond
	// realTimeLimit bounds every wait and every call in real time.
	realTimeLimit = 3 * time.Minute
	// within bounds, on the backend's clock, how long a container takes to
	// start, exit or be restarted.
	within = 60 * time.Second
)

// violation is the panic value that ends a case at its first violation.
type violation struct{ err error }

// harness is one case: the runtime under test and its clock.
type harness struct {
	tb     testing.TB
	rt     noderuntime.Runtime
	clk    clock.WithTicker
	fake   *testingclock.FakeClock
	image  string
	id     string
	pods   []*corev1.Pod
	stacks []byte
}

// failf ends the case with a violation.
func (h *harness) failf(format string, args ...any) {
	panic(violation{fmt.Errorf(format, args...)})
}

// tick moves time a little: one step of the fake clock, then lets every
// goroutine settle; or a short pause in real time.
func (h *harness) tick() {
	if h.fake == nil {
		time.Sleep(realPoll)
		return
	}
	h.fake.Step(fakeStep)
	h.settle()
}

// settle waits, with a fake clock, until every other goroutine is blocked.
func (h *harness) settle() {
	if h.fake == nil {
		return
	}
	if !settle.Wait(&h.stacks, realTimeLimit) {
		h.failf("goroutines did not settle within %v", realTimeLimit)
	}
}

// call runs fn in a goroutine and moves time until it returns: a runtime
// may wait on its clock (a grace period, a start) inside a call.
func call[T any](h *harness, what string, fn func(ctx context.Context) T) T {
	ctx, cancel := context.WithTimeout(context.Background(), realTimeLimit)
	defer cancel()
	ch := make(chan T, 1)
	go func() { ch <- fn(ctx) }()
	deadline := time.Now().Add(realTimeLimit)
	for {
		h.settle()
		select {
		case v := <-ch:
			return v
		default:
		}
		if time.Now().After(deadline) {
			h.failf("%s did not return within %v", what, realTimeLimit)
		}
		h.tick()
	}
}

// until moves time until cond holds, and ends the case when it does not
// within limit on the clock.
func (h *harness) until(what string, limit time.Duration, cond func() bool) {
	start := h.clk.Now()
	deadline := time.Now().Add(realTimeLimit)
	for !cond() {
		if h.clk.Since(start) > limit || time.Now().After(deadline) {
			h.failf("%s: not within %v", what, limit)
		}
		h.tick()
	}
}

// ctr describes one container of a test pod.
type ctr struct {
	name string
	// exitAfter, when set, makes the container exit that long after each
	// start with exitCode; otherwise it runs until stopped.
	exitAfter time.Duration
	exitCode  int
}

// newPod returns a pod of the case, scripted for the simulated runtime
// (annotations) and for a real one (a shell that handles TERM).
func (h *harness) newPod(name string, policy corev1.RestartPolicy, ctrs ...ctr) *corev1.Pod {
	grace := int64(2)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "runtimetest", UID: types.UID(h.id + "-" + name), Annotations: map[string]string{},
		},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, RestartPolicy: policy},
	}
	for _, c := range ctrs {
		suitekit.AddContainer(p, c.name, h.image, c.exitAfter, c.exitCode)
	}
	h.pods = append(h.pods, p)
	return p
}

// status inspects the pod.
func (h *harness) status(p *corev1.Pod) *noderuntime.PodStatus {
	type res struct {
		s   *noderuntime.PodStatus
		err error
	}
	r := call(h, "GetPodStatus", func(ctx context.Context) res {
		s, err := h.rt.GetPodStatus(ctx, p.UID, p.Name, p.Namespace)
		return res{s, err}
	})
	if r.err != nil {
		h.failf("GetPodStatus(%s): %v", p.Name, r.err)
	}
	if r.s == nil {
		h.failf("GetPodStatus(%s) returned a nil status and no error", p.Name)
	}
	return r.s
}

// sync runs SyncPod with the pod's current status and ends the case on an
// error other than a restart backoff. It returns that backoff error.
func (h *harness) sync(p *corev1.Pod) error {
	s := h.status(p)
	err := call(h, "SyncPod", func(ctx context.Context) error { return h.rt.SyncPod(ctx, p, s).Error() })
	if err != nil && !errors.Is(err, noderuntime.ErrCrashLoopBackOff) && !strings.Contains(err.Error(), noderuntime.ErrCrashLoopBackOff.Error()) {
		h.failf("SyncPod(%s): %v", p.Name, err)
	}
	return err
}

// kill runs KillPod with the given spec (nil for a runtime-only pod) and
// running pod.
func (h *harness) kill(p *corev1.Pod, running *noderuntime.Pod, what string) {
	grace := int64(1)
	if err := call(h, "KillPod", func(ctx context.Context) error { return h.rt.KillPod(ctx, p, running, &grace) }); err != nil {
		h.failf("%s: KillPod: %v", what, err)
	}
}

// list calls GetPods.
func (h *harness) list(all bool) []*noderuntime.Pod {
	type res struct {
		pods []*noderuntime.Pod
		err  error
	}
	r := call(h, "GetPods", func(ctx context.Context) res {
		pods, err := h.rt.GetPods(ctx, all)
		return res{pods, err}
	})
	if r.err != nil {
		h.failf("GetPods(all=%v): %v", all, r.err)
	}
	return r.pods
}

// listed returns the pod's entry in GetPods(all), or nil.
func (h *harness) listed(uid types.UID, all bool) *noderuntime.Pod {
	for _, p := range h.list(all) {
		if p != nil && p.ID == uid {
			return p
		}
	}
	return nil
}

// removeAll kills the case's pods and garbage-collects them when the
// runtime can. Violations here are reported, not fatal.
func (h *harness) removeAll() {
	defer func() {
		if r := recover(); r != nil {
			h.tb.Errorf("runtimetest cleanup: %v", r)
		}
	}()
	for _, p := range h.pods {
		s := h.status(p)
		if len(s.SandboxStatuses) > 0 || len(s.ContainerStatuses) > 0 {
			grace := int64(0)
			if err := call(h, "KillPod", func(ctx context.Context) error { return h.rt.KillPod(ctx, p, s.ToPod(), &grace) }); err != nil {
				h.tb.Errorf("runtimetest cleanup: kill pod %s: %v", p.Name, err)
			}
		}
	}
	if gc, ok := h.rt.(noderuntime.GarbageCollector); ok {
		ours := map[types.UID]bool{}
		for _, p := range h.pods {
			ours[p.UID] = true
		}
		if err := call(h, "GarbageCollect", func(ctx context.Context) error {
			return gc.GarbageCollect(ctx, func(uid types.UID) bool { return ours[uid] })
		}); err != nil {
			h.tb.Errorf("runtimetest cleanup: %v", err)
		}
	}
}

// byName returns the pod's container statuses of one name, newest first.
func byName(s *noderuntime.PodStatus, name string) []*noderuntime.ContainerStatus {
	var out []*noderuntime.ContainerStatus
	for _, c := range s.ContainerStatuses {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// readySandboxes counts the pod's ready sandboxes.
func readySandboxes(s *noderuntime.PodStatus) int {
	n := 0
	for _, sb := range s.SandboxStatuses {
		if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			n++
		}
	}
	return n
}

// running reports whether every named container's newest copy runs.
func running(s *noderuntime.PodStatus, names ...string) bool {
	for _, n := range names {
		c := s.FindContainerStatusByName(n)
		if c == nil || c.State != noderuntime.ContainerStateRunning {
			return false
		}
	}
	return true
}
