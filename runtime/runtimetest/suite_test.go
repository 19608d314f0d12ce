package runtimetest

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The default runtime (runtime/cri) on the simulated CRI runtime passes.
func TestCRIManagerOnTheSimulatedRuntimePasses(t *testing.T) {
	Suite(t, SimBackend())
}

// wrapped is SimBackend with the runtime replaced by wrap(runtime).
func wrapped(name string, wrap func(noderuntime.Runtime) noderuntime.Runtime) Backend {
	b := SimBackend()
	open := b.Open
	b.Name = name
	b.Open = func(tb testing.TB) (noderuntime.Runtime, clock.WithTicker) {
		rt, clk := open(tb)
		return wrap(rt), clk
	}
	return b
}

// Each broken runtime fails the case that looks for its bug, with a
// message naming it.
func TestSuiteFailsBrokenRuntimes(t *testing.T) {
	tests := []struct {
		name     string
		backend  Backend
		caseName string
		want     string
	}{
		{
			name:     "exit codes reported as 0",
			backend:  wrapped("zero-exit", func(rt noderuntime.Runtime) noderuntime.Runtime { return zeroExit{rt} }),
			caseName: "exit codes are reported and a Never pod is not restarted",
			want:     "container bad exited with code 3, the runtime reports 0",
		},
		{
			name:     "a KillPod that does nothing",
			backend:  wrapped("noop-kill", func(rt noderuntime.Runtime) noderuntime.Runtime { return noopKill{rt} }),
			caseName: "a killed pod stops, is listed only with all, and a second kill is fine",
			want:     "after KillPod 2 containers run",
		},
		{
			name:     "GetPods ignoring all",
			backend:  wrapped("running-only", func(rt noderuntime.Runtime) noderuntime.Runtime { return runningOnly{rt} }),
			caseName: "a killed pod stops, is listed only with all, and a second kill is fine",
			want:     "GetPods(all=true) does not list the killed pod",
		},
		{
			name:     "SyncPod that never restarts a container",
			backend:  wrapped("no-restart", func(rt noderuntime.Runtime) noderuntime.Runtime { return noRestart{rt} }),
			caseName: "an exited container of an Always pod is restarted in the same sandbox",
			want:     "a second copy of the container running: not within",
		},
		{
			name:     "SyncPod that ignores the status it is given",
			backend:  wrapped("blind-sync", func(rt noderuntime.Runtime) noderuntime.Runtime { return blindSync{rt} }),
			caseName: "a synced pod runs, is listed, and a second sync starts nothing",
			want:     "SyncPod(run)", // on runtime/cri the second sandbox's name clashes with the first's
		},
		{
			name:     "GetPods handing out its own objects",
			backend:  wrapped("shared-list", func(rt noderuntime.Runtime) noderuntime.Runtime { return &sharedList{Runtime: rt} }),
			caseName: "a synced pod runs, is listed, and a second sync starts nothing",
			want:     "the caller must own the objects",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckCase(t, tt.backend, tt.caseName)
			t.Logf("the case reported: %v", err)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("the case reported %v, want a failure containing %q", err, tt.want)
			}
		})
	}
}

// zeroExit reports every exit code as 0.
type zeroExit struct{ noderuntime.Runtime }

func (r zeroExit) GetPodStatus(ctx context.Context, uid types.UID, name, ns string) (*noderuntime.PodStatus, error) {
	s, err := r.Runtime.GetPodStatus(ctx, uid, name, ns)
	if err == nil {
		for _, c := range s.ContainerStatuses {
			c.ExitCode = 0
		}
	}
	return s, err
}

// noopKill's KillPod does nothing.
type noopKill struct{ noderuntime.Runtime }

func (noopKill) KillPod(context.Context, *corev1.Pod, *noderuntime.Pod, *int64) error { return nil }

// runningOnly's GetPods lists running pods only, whatever all says.
type runningOnly struct{ noderuntime.Runtime }

func (r runningOnly) GetPods(ctx context.Context, _ bool) ([]*noderuntime.Pod, error) {
	return r.Runtime.GetPods(ctx, false)
}

// noRestart's SyncPod does nothing once the pod has a container.
type noRestart struct{ noderuntime.Runtime }

func (r noRestart) SyncPod(ctx context.Context, pod *corev1.Pod, s *noderuntime.PodStatus) *noderuntime.SyncResult {
	if len(s.ContainerStatuses) > 0 {
		return &noderuntime.SyncResult{}
	}
	return r.Runtime.SyncPod(ctx, pod, s)
}

// blindSync's SyncPod acts as if the pod had nothing yet.
type blindSync struct{ noderuntime.Runtime }

func (r blindSync) SyncPod(ctx context.Context, pod *corev1.Pod, _ *noderuntime.PodStatus) *noderuntime.SyncResult {
	return r.Runtime.SyncPod(ctx, pod, &noderuntime.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace})
}

// sharedList keeps the pods it listed and hands the same objects out
// again, as a runtime caching its listing without copying would.
type sharedList struct {
	noderuntime.Runtime
	last map[types.UID]*noderuntime.Pod
}

func (r *sharedList) GetPods(ctx context.Context, all bool) ([]*noderuntime.Pod, error) {
	pods, err := r.Runtime.GetPods(ctx, all)
	if err != nil {
		return nil, err
	}
	if r.last == nil {
		r.last = map[types.UID]*noderuntime.Pod{}
	}
	for i, p := range pods {
		if old, ok := r.last[p.ID]; ok {
			pods[i] = old
		} else {
			r.last[p.ID] = p
		}
	}
	return pods, nil
}
