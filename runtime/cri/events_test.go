package cri

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// failedLiveness is a runtime.LivenessResults failing the given IDs.
type failedLiveness map[string]bool

func (f failedLiveness) LivenessFailed(id noderuntime.ContainerID) bool { return f[id.ID] }

func TestSyncPodRecordsTheKubeletsEventsForAStart(t *testing.T) {
	e := newTestEnv(t)
	rec := e.withRecorder()
	pod := newPod("u1", "a")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`Normal Pulled spec.containers{a}: Container image "` + testImage + `" already present on machine`,
		"Normal Created spec.containers{a}: Created container: a",
		"Normal Started spec.containers{a}: Started container a",
	}
	var got []string
	for _, ev := range rec.list() {
		if strings.Contains(ev, "spec.containers{a}") {
			got = append(got, ev)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events\n%q\nwant\n%q", got, want)
	}
}

func TestFailedLivenessKillsWithTheProbesGracePeriodAndRestarts(t *testing.T) {
	e := newTestEnv(t)
	rec := e.withRecorder()
	pod := newPod("u1", "a")
	pod.Spec.Containers[0].LivenessProbe = &corev1.Probe{TerminationGracePeriodSeconds: ptr(int64(4))}
	e.expectStart(t, pod, 0)
	old := e.containerIDOf(t, pod, "a")
	e.m.SetLivenessResults(failedLiveness{old: true})
	e.expectStart(t, pod, 1)
	if _, timeouts := e.rs.stops(); timeouts["a"] != 4 {
		t.Fatalf("a stopped with %ds, want the liveness probe's 4s", timeouts["a"])
	}
	if events := rec.list(); !slices.Contains(events, "Normal Killing spec.containers{a}: Container a failed liveness probe, will be restarted") {
		t.Fatalf("events %q lack the liveness Killing event", events)
	}
	// The new instance is not the one that failed: it keeps running.
	if r := e.sync(t, pod); r.Error() != nil || len(r.Steps) != 0 {
		t.Fatalf("steps after the restart = %+v, want none", r.Steps)
	}
}

func TestCrashLoopBackOffRecordsABackOffEventOnThePod(t *testing.T) {
	e := newTestEnv(t)
	rec := e.withRecorder()
	pod := newPod("u1", "a")
	e.expectStart(t, pod, 0)
	e.crash(t, pod)
	e.expectStart(t, pod, 1)
	e.crash(t, pod)
	e.sync(t, pod)
	if events := rec.list(); !slices.Contains(events, "Warning BackOff pod web-u1: Back-off restarting failed container a in pod web-u1_default(u1)") {
		t.Fatalf("events %q lack BackOff", events)
	}
}

func TestVolumeNotSetUpFailsWithAConfigErrorAndAnEventNamingIt(t *testing.T) {
	e := newTestEnv(t)
	rec := e.withRecorder()
	pod := newPod("u1", "a")
	pod.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}}
	r := e.sync(t, pod)
	if reason, msg := r.Waiting("a"); reason != "CreateContainerConfigError" || !strings.Contains(msg, "volume cfg: no volume manager is set") {
		t.Fatalf("waiting = %q %q", reason, msg)
	}
	want := "Warning Failed spec.containers{a}: Error: volume cfg: no volume manager is set"
	if events := rec.list(); !slices.ContainsFunc(events, func(s string) bool { return strings.HasPrefix(s, want) }) {
		t.Fatalf("events %q lack %q", events, want)
	}
}

func TestContainerRefNamesTheContainersList(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := newPod("u1", "a")
	pod.Spec.InitContainers = []corev1.Container{{Name: "init"}, {Name: "side", RestartPolicy: &always}}
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug"}}}
	for name, want := range map[string]string{
		"a": "spec.containers{a}", "init": "spec.initContainers{init}", "side": "spec.initContainers{side}",
		"debug": "spec.ephemeralContainers{debug}",
	} {
		ref := noderuntime.ContainerRef(pod, name)
		if ref.FieldPath != want || ref.Kind != "Pod" || ref.Name != pod.Name || ref.UID != pod.UID {
			t.Errorf("ref of %s = %+v, want field path %s", name, ref, want)
		}
	}
}
