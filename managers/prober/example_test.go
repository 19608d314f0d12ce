package prober_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/managers/prober"
)

// alwaysFails is an ExecRunner whose commands all exit 1.
type alwaysFails struct{}

func (alwaysFails) ExecSync(context.Context, string, []string, time.Duration) ([]byte, []byte, int, error) {
	return []byte("not healthy"), nil, 1, nil
}

// A liveness probe that fails its one allowed time: the agent reads the
// Failure from the liveness results and restarts the container.
func Example() {
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := prober.New(alwaysFails{}, clk, nil, nil, logr.Discard(), prober.Config{Seed: 1})
	// Probes of a Prober younger than their period start at a random point
	// of it (agent restart); this one is a minute old, so they start at once.
	clk.Step(time.Minute)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app",
			LivenessProbe: &corev1.Probe{
				ProbeHandler:     corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"healthy"}}},
				PeriodSeconds:    10,
				FailureThreshold: 1,
			},
		}}},
	}
	p.AddPod(pod)
	p.UpdatePodStatus(pod, &corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "app", ContainerID: "containerd://abc",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(clk.Now())}},
	}}})
	// Run starts the workers of the pods added so far: started after the
	// status is known, the first probe sees the running container (a
	// liveness worker that found none waits a whole period, as upstream).
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()

	// The first update is the initial value, the second the verdict.
	updates := p.Liveness().Updates()
	for range 2 {
		u := <-updates
		fmt.Println(u.Result, u.ContainerID)
	}
	cancel()
	fmt.Println(<-done)
	// Output:
	// Success containerd://abc
	// Failure containerd://abc
	// <nil>
}
