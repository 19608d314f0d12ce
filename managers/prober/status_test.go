package prober

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestUpdatePodStatus(t *testing.T) {
	t.Parallel()
	always := corev1.ContainerRestartPolicyAlways
	longAgo := epoch.Add(-time.Hour) // before the Prober: adopted
	type cache struct {
		probe ProbeType
		r     Result
	}
	cases := []struct {
		name        string
		ctr         corev1.Container
		init        bool // ctr is an init container
		status      corev1.ContainerStatus
		podReady    bool
		cached      []cache
		wantStarted bool
		wantReady   bool
	}{{
		name:        "a running container without probes is started and ready",
		ctr:         corev1.Container{Name: "app"},
		status:      running("app", ctrID, epoch),
		wantStarted: true, wantReady: true,
	}, {
		name:   "a waiting container is neither started nor ready",
		ctr:    corev1.Container{Name: "app"},
		status: corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}},
	}, {
		name:   "a terminated container is neither started nor ready, even after its probes passed",
		ctr:    corev1.Container{Name: "app", ReadinessProbe: execProbe(), StartupProbe: execProbe()},
		status: terminated("app", ctrID, 0),
		cached: []cache{{Startup, Success}, {Readiness, Success}},
	}, {
		name:        "a container with a readiness probe is not ready before its first success",
		ctr:         corev1.Container{Name: "app", ReadinessProbe: execProbe()},
		status:      running("app", ctrID, epoch),
		wantStarted: true,
	}, {
		name:        "a container with a readiness probe is ready once it succeeded",
		ctr:         corev1.Container{Name: "app", ReadinessProbe: execProbe()},
		status:      running("app", ctrID, epoch),
		cached:      []cache{{Readiness, Success}},
		wantStarted: true, wantReady: true,
	}, {
		name:        "a container whose readiness probe failed is not ready",
		ctr:         corev1.Container{Name: "app", ReadinessProbe: execProbe()},
		status:      running("app", ctrID, epoch),
		cached:      []cache{{Readiness, Failure}},
		wantStarted: true,
	}, {
		name:   "a container with a startup probe is neither started nor ready before it passes",
		ctr:    corev1.Container{Name: "app", StartupProbe: execProbe()},
		status: running("app", ctrID, epoch),
		cached: []cache{{Startup, Unknown}},
	}, {
		name:        "a container whose startup probe passed is started, and ready without a readiness probe",
		ctr:         corev1.Container{Name: "app", StartupProbe: execProbe()},
		status:      running("app", ctrID, epoch),
		cached:      []cache{{Startup, Success}},
		wantStarted: true, wantReady: true,
	}, {
		name:   "a container whose startup probe passed is not ready before its readiness probe passes",
		ctr:    corev1.Container{Name: "app", StartupProbe: execProbe(), ReadinessProbe: execProbe()},
		status: running("app", ctrID, epoch), cached: []cache{{Startup, Success}},
		wantStarted: true,
	}, {
		name:   "a liveness failure alone does not make a container unready",
		ctr:    corev1.Container{Name: "app", LivenessProbe: execProbe()},
		status: running("app", ctrID, epoch), cached: []cache{{Liveness, Failure}},
		wantStarted: true, wantReady: true,
	}, {
		name:   "a new container ignores a Started carried over from its predecessor",
		ctr:    corev1.Container{Name: "app", StartupProbe: execProbe()},
		status: func() corev1.ContainerStatus { s := running("app", ctrID, epoch); s.Started = ptr(true); return s }(),
	}, {
		name:        "an adopted container keeps a carried-over Started until its startup probe reports",
		ctr:         corev1.Container{Name: "app", StartupProbe: execProbe()},
		status:      func() corev1.ContainerStatus { s := running("app", ctrID, longAgo); s.Started = ptr(true); return s }(),
		wantStarted: true, wantReady: true,
	}, {
		name:        "an adopted container with a readiness probe is ready when the pod was",
		ctr:         corev1.Container{Name: "app", ReadinessProbe: execProbe()},
		status:      running("app", ctrID, longAgo),
		podReady:    true,
		wantStarted: true, wantReady: true,
	}, {
		name:        "an adopted container with a readiness probe is not ready when the pod was not",
		ctr:         corev1.Container{Name: "app", ReadinessProbe: execProbe()},
		status:      running("app", ctrID, longAgo),
		wantStarted: true,
	}, {
		name:        "an adopted container whose readiness probe failed is not ready",
		ctr:         corev1.Container{Name: "app", ReadinessProbe: execProbe()},
		status:      running("app", ctrID, longAgo),
		podReady:    true,
		cached:      []cache{{Readiness, Failure}},
		wantStarted: true,
	}, {
		name:      "an init container that exited 0 is ready",
		ctr:       corev1.Container{Name: "setup"},
		init:      true,
		status:    terminated("setup", ctrID, 0),
		wantReady: true,
	}, {
		name:   "an init container that failed is not ready",
		ctr:    corev1.Container{Name: "setup"},
		init:   true,
		status: terminated("setup", ctrID, 2),
	}, {
		name:        "a running init container is started but not ready",
		ctr:         corev1.Container{Name: "setup"},
		init:        true,
		status:      running("setup", ctrID, epoch),
		wantStarted: true,
	}, {
		name:        "a sidecar follows its readiness probe",
		ctr:         corev1.Container{Name: "proxy", RestartPolicy: &always, ReadinessProbe: execProbe()},
		init:        true,
		status:      running("proxy", ctrID, epoch),
		cached:      []cache{{Readiness, Success}},
		wantStarted: true, wantReady: true,
	}, {
		name:   "a sidecar waits for its startup probe",
		ctr:    corev1.Container{Name: "proxy", RestartPolicy: &always, StartupProbe: execProbe()},
		init:   true,
		status: running("proxy", ctrID, epoch),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, Config{})
			pod := newPod()
			status := podStatus()
			if tc.init {
				pod.Spec.InitContainers = []corev1.Container{tc.ctr}
				status.InitContainerStatuses = []corev1.ContainerStatus{tc.status}
			} else {
				pod.Spec.Containers = []corev1.Container{tc.ctr}
				status.ContainerStatuses = []corev1.ContainerStatus{tc.status}
			}
			if tc.podReady {
				pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			}
			e.p.AddPod(pod)
			for _, c := range tc.cached {
				e.p.resultsFor(c.probe).store(ctrID, c.r)
			}
			e.p.UpdatePodStatus(pod, status)
			got := status.ContainerStatuses
			if tc.init {
				got = status.InitContainerStatuses
			}
			if got[0].Started == nil || *got[0].Started != tc.wantStarted || got[0].Ready != tc.wantReady {
				started := "nil"
				if got[0].Started != nil {
					started = map[bool]string{true: "true", false: "false"}[*got[0].Started]
				}
				t.Errorf("started %s ready %v, want started %v ready %v", started, got[0].Ready, tc.wantStarted, tc.wantReady)
			}
		})
	}
}

func TestUpdatePodStatusTriggersAWaitingReadinessProbe(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	pod := newPod(corev1.Container{Name: "app", ReadinessProbe: execProbe()})
	e.p.AddPod(pod)
	w := e.worker(t, "app", Readiness)
	e.p.UpdatePodStatus(pod, podStatus(running("app", ctrID, epoch)))
	select {
	case <-w.triggerCh:
	default:
		t.Fatal("UpdatePodStatus did not ask the readiness worker for a probe")
	}
	e.p.readiness.store(ctrID, Success)
	e.p.UpdatePodStatus(pod, podStatus(running("app", ctrID, epoch)))
	select {
	case <-w.triggerCh:
		t.Error("UpdatePodStatus triggered a probe of a container that is ready")
	default:
	}
}

func TestUpdatePodStatusRecordsOnlyProbedPods(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	plain := newPod(corev1.Container{Name: "app"})
	e.p.AddPod(plain)
	e.p.UpdatePodStatus(plain, podStatus(running("app", ctrID, epoch)))
	if r := e.p.record(podUID); r != nil {
		t.Errorf("recorded %+v for a pod without probes", r)
	}
	probed := newPod(corev1.Container{Name: "app", LivenessProbe: execProbe()})
	e.p.AddPod(probed)
	e.p.UpdatePodStatus(probed, podStatus(running("app", ctrID, epoch)))
	if r := e.p.record(podUID); r == nil || r.podIP != "127.0.0.1" {
		t.Errorf("record = %+v, want one with the pod IP", r)
	}
}
