package cri

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestKillPodGracePeriod(t *testing.T) {
	cases := []struct {
		name     string
		minimum  time.Duration
		mutate   func(*corev1.Pod)
		orphan   bool
		override *int64
		want     int64
	}{
		{name: "the override wins over the pod's periods", override: ptr(int64(5)), want: 5},
		{name: "an override below the minimum is raised to it", override: ptr(int64(0)), want: 2},
		{name: "the deletion grace period beats the spec's", mutate: func(p *corev1.Pod) { p.DeletionGracePeriodSeconds = ptr(int64(10)) }, want: 10},
		{name: "the spec's termination grace period applies", mutate: func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr(int64(45)) }, want: 45},
		{name: "a pod without any grace period gets 30s", mutate: func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = nil }, want: 30},
		{name: "a one-second period is raised to the minimum", mutate: func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr(int64(1)) }, want: 2},
		{name: "a configured minimum of 5s raises short periods", minimum: 5 * time.Second,
			mutate: func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr(int64(3)) }, want: 5},
		{name: "an orphan uses the deletion grace annotation", orphan: true,
			mutate: func(p *corev1.Pod) { p.DeletionGracePeriodSeconds = ptr(int64(7)) }, want: 7},
		{name: "an orphan uses the termination grace annotation", orphan: true,
			mutate: func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr(int64(12)) }, want: 12},
		{name: "an orphan without annotations gets 30s", orphan: true,
			mutate: func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = nil }, want: 30},
		{name: "an orphan with an override uses the override", orphan: true, override: ptr(int64(3)), want: 3},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, func(c *Config) { c.MinimumKillGracePeriod = tt.minimum })
			pod := newPod("u1", "a", "b")
			if tt.mutate != nil {
				tt.mutate(pod)
			}
			if err := e.sync(t, pod).Error(); err != nil {
				t.Fatal(err)
			}
			running := e.status(t, pod).ToPod()
			arg := pod
			if tt.orphan {
				arg = nil
			}
			if err := e.m.KillPod(context.Background(), arg, running, tt.override); err != nil {
				t.Fatalf("KillPod: %v", err)
			}
			for _, c := range running.Containers {
				if got := e.rs.stopTimeouts[c.ID.ID]; got != tt.want {
					t.Errorf("container %s stopped with %ds, want %ds", c.Name, got, tt.want)
				}
			}
			st := e.status(t, pod)
			if len(st.GetRunningContainerStatuses()) != 0 || st.SandboxStatuses[0].State != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
				t.Error("KillPod left the pod running")
			}
		})
	}
}

func TestKillPodJoinsErrorsNamingContainerAndPod(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "a")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	running := e.status(t, pod).ToPod()
	e.rs.InjectError("StopContainer", errors.New("device busy"))
	err := e.m.KillPod(context.Background(), pod, running, nil)
	if err == nil || !errors.Is(err, noderuntime.ErrKillContainer) {
		t.Fatalf("KillPod error = %v, want ErrKillContainer", err)
	}
	for _, want := range []string{`"a"`, "web-u1_default(u1)", "device busy"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	// The sandbox is still stopped, and a second KillPod succeeds.
	if err := e.m.KillPod(context.Background(), pod, running, nil); err != nil {
		t.Errorf("second KillPod: %v", err)
	}
}

func TestKillPodIgnoresObjectsAlreadyGone(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "a")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	running := e.status(t, pod).ToPod()
	gone := grpcstatus.Error(codes.NotFound, "no such container")
	e.rs.InjectError("StopContainer", gone)
	e.rs.InjectError("StopPodSandbox", grpcstatus.Error(codes.NotFound, "no such sandbox"))
	if err := e.m.KillPod(context.Background(), pod, running, nil); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
}

func TestKillPodWithNothingToKill(t *testing.T) {
	e := newTestEnv(t)
	if err := e.m.KillPod(context.Background(), nil, nil, nil); err != nil {
		t.Fatalf("KillPod(nil): %v", err)
	}
	if err := e.m.KillPod(context.Background(), nil, &noderuntime.Pod{ID: "x"}, nil); err != nil {
		t.Fatalf("KillPod(empty): %v", err)
	}
	if calls := e.rs.GetCalls(); len(calls) != 0 {
		t.Errorf("runtime calls = %v, want none", calls)
	}
}
