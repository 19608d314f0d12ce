package prober

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWorkerStopsOrGoesOn(t *testing.T) {
	t.Parallel()
	always := corev1.ContainerRestartPolicyAlways
	cases := []struct {
		name      string
		pod       func() *corev1.Pod
		probe     ProbeType
		status    *corev1.PodStatus
		wantGoOn  bool
		wantCache string
	}{{
		name:     "a worker without a recorded status waits",
		pod:      func() *corev1.Pod { return newPod(corev1.Container{Name: "app", LivenessProbe: execProbe()}) },
		probe:    Liveness,
		wantGoOn: true, wantCache: "-",
	}, {
		name:  "a worker of a pod that succeeded stops",
		pod:   func() *corev1.Pod { return newPod(corev1.Container{Name: "app", LivenessProbe: execProbe()}) },
		probe: Liveness,
		status: func() *corev1.PodStatus {
			s := podStatus(terminated("app", ctrID, 0))
			s.Phase = corev1.PodSucceeded
			return s
		}(),
		wantGoOn: false, wantCache: "-",
	}, {
		name:     "a worker of a container not created yet waits",
		pod:      func() *corev1.Pod { return newPod(corev1.Container{Name: "app", LivenessProbe: execProbe()}) },
		probe:    Liveness,
		status:   podStatus(corev1.ContainerStatus{Name: "app"}),
		wantGoOn: true, wantCache: "-",
	}, {
		name: "a worker of an exited container that will not restart stops",
		pod: func() *corev1.Pod {
			p := newPod(corev1.Container{Name: "app", ReadinessProbe: execProbe()})
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			return p
		},
		probe:    Readiness,
		status:   podStatus(terminated("app", ctrID, 1)),
		wantGoOn: false, wantCache: "Failure",
	}, {
		name: "a worker of an exited container whose own restartPolicy Always overrides the pod's Never goes on",
		pod: func() *corev1.Pod {
			p := newPod(corev1.Container{Name: "app", RestartPolicy: &always, ReadinessProbe: execProbe()})
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			return p
		},
		probe:    Readiness,
		status:   podStatus(terminated("app", ctrID, 1)),
		wantGoOn: true, wantCache: "Failure",
	}, {
		name: "a worker of a container that exited 0 under restartPolicy OnFailure stops",
		pod: func() *corev1.Pod {
			p := newPod(corev1.Container{Name: "app", ReadinessProbe: execProbe()})
			p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			return p
		},
		probe:    Readiness,
		status:   podStatus(terminated("app", ctrID, 0)),
		wantGoOn: false, wantCache: "Failure",
	}, {
		name: "a worker of an exited sidecar goes on even under restartPolicy Never",
		pod: func() *corev1.Pod {
			p := newPod(corev1.Container{Name: "app"})
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			p.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: &always, ReadinessProbe: execProbe()}}
			return p
		},
		probe: Readiness,
		status: func() *corev1.PodStatus {
			s := podStatus(running("app", ctrID2, epoch))
			s.InitContainerStatuses = []corev1.ContainerStatus{terminated("proxy", ctrID, 1)}
			return s
		}(),
		wantGoOn: true, wantCache: "Failure",
	}, {
		name: "a liveness worker of a pod being deleted reports Success and stops",
		pod: func() *corev1.Pod {
			p := newPod(corev1.Container{Name: "app", LivenessProbe: execProbe()})
			p.DeletionTimestamp = &metav1.Time{Time: epoch}
			return p
		},
		probe:    Liveness,
		status:   podStatus(running("app", ctrID, epoch)),
		wantGoOn: false, wantCache: "Success",
	}, {
		name: "a readiness worker of a pod being deleted goes on probing",
		pod: func() *corev1.Pod {
			p := newPod(corev1.Container{Name: "app", ReadinessProbe: execProbe()})
			p.DeletionTimestamp = &metav1.Time{Time: epoch}
			return p
		},
		probe:    Readiness,
		status:   podStatus(running("app", ctrID, epoch)),
		wantGoOn: true, wantCache: "Success",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, Config{})
			pod := tc.pod()
			e.p.AddPod(pod)
			if tc.status != nil {
				e.p.UpdatePodStatus(pod, tc.status)
			}
			name := "app"
			if len(pod.Spec.InitContainers) > 0 {
				name = pod.Spec.InitContainers[0].Name
			}
			w := e.worker(t, name, tc.probe)
			if got := w.doProbe(context.Background()); got != tc.wantGoOn {
				t.Errorf("doProbe() = %v, want %v", got, tc.wantGoOn)
			}
			got := "-"
			if r, ok := w.results.Get(ctrID); ok {
				got = r.String()
			}
			if got != tc.wantCache {
				t.Errorf("cached result %s, want %s", got, tc.wantCache)
			}
		})
	}
}

func TestWorkerPassesTimeoutAndExpandedCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	probe := execProbe(func(p *corev1.Probe) {
		p.TimeoutSeconds = 7
		p.Exec.Command = []string{"check", "$(PORT)", "$(SECRET)", "$$(PORT)"}
	})
	pod := newPod(corev1.Container{Name: "app", LivenessProbe: probe, Env: []corev1.EnvVar{
		{Name: "PORT", Value: "80"}, {Name: "PORT", Value: "8080"},
		{Name: "SECRET", ValueFrom: &corev1.EnvVarSource{}},
	}})
	e.p.AddPod(pod)
	e.p.UpdatePodStatus(pod, podStatus(running("app", ctrID, epoch)))
	e.worker(t, "app", Liveness).doProbe(context.Background())

	if len(e.exec.calls) != 1 {
		t.Fatalf("%d exec calls, want 1", len(e.exec.calls))
	}
	c := e.exec.calls[0]
	if c.id != ctrID || c.timeout != 7*time.Second {
		t.Errorf("exec in %q with timeout %v, want %q and 7s", c.id, c.timeout, ctrID)
	}
	want := []string{"check", "8080", "", "$(PORT)"}
	if len(c.cmd) != len(want) {
		t.Fatalf("command %q, want %q", c.cmd, want)
	}
	for i := range want {
		if c.cmd[i] != want[i] {
			t.Errorf("command %q, want %q", c.cmd, want)
			break
		}
	}
}

func TestAdoptedContainerKeepsItsStateUntilProbed(t *testing.T) {
	t.Parallel()
	// The agent restarted: the Prober is new, the container has been
	// running for an hour and was started and ready before.
	e := newEnv(t, Config{})
	pod := newPod(corev1.Container{Name: "app", StartupProbe: execProbe(), ReadinessProbe: execProbe(), LivenessProbe: execProbe()})
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	e.p.AddPod(pod)
	cs := running("app", ctrID, epoch.Add(-time.Hour))
	cs.Started, cs.Ready = ptr(true), true
	status := podStatus(cs)
	e.p.UpdatePodStatus(pod, status)

	for _, pt := range []ProbeType{Startup, Readiness, Liveness} {
		e.worker(t, "app", pt).doProbe(context.Background())
	}
	if r, ok := e.p.Startup().Get(ctrID); !ok || r != Success {
		t.Errorf("startup result %v, %v; want Success carried over", r, ok)
	}
	if n := e.exec.count(); n != 2 {
		t.Errorf("%d exec calls, want 2 (liveness and readiness, not startup)", n)
	}
	status = podStatus(running("app", ctrID, epoch.Add(-time.Hour)))
	e.p.UpdatePodStatus(pod, status)
	if s := status.ContainerStatuses[0]; !*s.Started || !s.Ready {
		t.Errorf("started %v ready %v, want both true", *s.Started, s.Ready)
	}
}
