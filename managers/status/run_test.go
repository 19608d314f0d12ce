package status

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// run starts the fixture's manager and stops it when the test ends.
func (f *fixture) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.m.Run(ctx) }()
	f.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				f.t.Errorf("Run = %v, want nil", err)
			}
		case <-time.After(waitLimit):
			f.t.Error("Run did not return after its context ended")
		}
	})
}

// phaseIs reports whether the API pod has the phase.
func (f *fixture) phaseIs(name string, phase corev1.PodPhase) func() bool {
	return func() bool {
		p, err := f.client.Tracker().Get(podsGVR, "default", name)
		return err == nil && p.(*corev1.Pod).Status.Phase == phase
	}
}

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

func TestRunWritesAChangeAtOnce(t *testing.T) {
	pod := apiPod("p", "uid-1")
	f := newFixture(t, pod)
	f.run()
	f.m.SetPodStatus(pod, running())
	until(t, "status written", f.phaseIs("p", corev1.PodRunning))
}

func TestRunRetriesAFailedWriteOnItsTimer(t *testing.T) {
	pod := apiPod("p", "uid-1")
	f := newFixture(t, pod)
	f.m.cfg.SyncPeriod = time.Hour // only the retry timer can write it
	var failures atomic.Int32
	f.client.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, apiruntime.Object, error) {
		if failures.Load() == 0 {
			failures.Add(1)
			return true, nil, errors.New("connection reset")
		}
		return false, nil, nil
	})
	f.run()
	f.m.SetPodStatus(pod, running())
	until(t, "first write failed", func() bool { return failures.Load() == 1 })
	// The ticker is one waiter; the retry timer makes two.
	until(t, "retry timer armed", func() bool { return f.clk.Waiters() == 2 })
	f.clk.Step(minRetry)
	until(t, "status written by the retry", f.phaseIs("p", corev1.PodRunning))
}

func TestRunChecksEverythingEverySyncPeriod(t *testing.T) {
	pod := apiPod("p", "uid-1")
	f := newFixture(t, pod)
	f.run()
	f.m.SetPodStatus(pod, running())
	until(t, "status written", f.phaseIs("p", corev1.PodRunning))

	// Someone else sets the phase back; the agent's source sees it.
	changed, _ := f.client.Tracker().Get(podsGVR, "default", "p")
	back := changed.(*corev1.Pod).DeepCopy()
	back.Status.Phase = corev1.PodPending
	if err := f.client.Tracker().Update(podsGVR, back, "default"); err != nil {
		t.Fatal(err)
	}
	f.pods.set(back)
	f.clk.Step(10 * time.Second)
	until(t, "status written again", f.phaseIs("p", corev1.PodRunning))
}

func TestRunRejectsAnInvalidConfig(t *testing.T) {
	m := New(nil, nil, nil, clocktesting.NewFakeClock(epoch), logr.Discard(), Config{SyncPeriod: -time.Second})
	if err := m.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "syncPeriod") {
		t.Fatalf("Run = %v, want a syncPeriod error", err)
	}
}
