package status

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/nodekit/nodekit/sources"
)

var podsResource = schema.GroupResource{Resource: "pods"}

func TestNewStatusIsPatchedIntoTheAPIPod(t *testing.T) {
	pod := apiPod("p", "uid-1")
	f := newFixture(t, pod)
	f.m.SetPodStatus(pod, running())
	f.sync(false)

	patches := f.patches()
	if len(patches) != 1 {
		t.Fatalf("actions = %v, want one patch", f.actions())
	}
	p := patches[0]
	if p.GetSubresource() != "status" || p.GetPatchType() != types.StrategicMergePatchType || p.GetName() != "p" {
		t.Fatalf("patch = %s %s/%s, want a strategic merge patch of p/status", p.GetPatchType(), p.GetName(), p.GetSubresource())
	}
	got := f.apiPod("p").Status
	if got.Phase != corev1.PodRunning || len(got.ContainerStatuses) != 1 {
		t.Fatalf("API status = %+v, want the agent's Running status", got)
	}
	if findCondition(got.Conditions, corev1.PodScheduled) == nil {
		t.Fatal("the scheduler's PodScheduled condition was lost")
	}

	// Written: nothing more to do until the status changes.
	f.actions()
	f.sync(false)
	if got := f.actions(); len(got) != 0 {
		t.Fatalf("actions after the status was written = %v, want none", got)
	}
}

func TestStaticPodStatusGoesToItsMirrorPod(t *testing.T) {
	mirror := apiPod("static-node1", "mirror-uid")
	mirror.Annotations = map[string]string{sources.AnnotationMirror: "hash"}
	f := newFixture(t, mirror)
	static := apiPod("static-node1", "static-uid")
	static.Status = corev1.PodStatus{}
	f.pods.set(static)
	f.pods.translate("static-uid", "")

	f.m.SetPodStatus(static, running())
	f.sync(true)
	if got := f.actions(); len(got) != 0 {
		t.Fatalf("actions without a mirror pod = %v, want none", got)
	}

	f.pods.translate("static-uid", "mirror-uid")
	f.sync(true)
	if got := f.apiPod("static-node1").Status.Phase; got != corev1.PodRunning {
		t.Fatalf("mirror pod phase = %s, want Running", got)
	}
	if f.m.apiVersions["mirror-uid"] != 1 {
		t.Fatalf("apiVersions = %v, want version 1 recorded for the mirror UID", f.m.apiVersions)
	}
}

func TestPodsMissingFromTheAPIAreSkipped(t *testing.T) {
	tests := []struct {
		name  string
		inAPI *corev1.Pod
	}{
		{name: "a pod not in the API server is skipped"},
		{name: "a pod recreated with another UID is skipped", inAPI: apiPod("p", "other-uid")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.inAPI != nil {
				if err := f.client.Tracker().Add(tt.inAPI); err != nil {
					t.Fatal(err)
				}
			}
			pod := apiPod("p", "uid-1")
			f.pods.set(pod)
			f.m.SetPodStatus(pod, running())
			f.sync(false)
			if got := f.actions(); !reflect.DeepEqual(got, []string{"get"}) {
				t.Fatalf("actions = %v, want only the get", got)
			}
			if _, ok := f.m.apiVersions["uid-1"]; ok {
				t.Fatal("a version was recorded for a pod that was not written")
			}
		})
	}
}

func TestUnchangedStatusIsNotPatched(t *testing.T) {
	pod := apiPod("p", "uid-1")
	f := newFixture(t, pod)
	f.m.SetPodStatus(pod, running())
	f.sync(false)
	// The agent restarts: a new manager meets a status already written.
	written := f.apiPod("p")
	f.m = New(f.client, newResolver(written), nil, f.clk, logr.Discard(), Config{})
	f.actions()
	f.m.SetPodStatus(written, written.Status.DeepCopy())
	f.sync(false)
	if got := f.actions(); !reflect.DeepEqual(got, []string{"get"}) {
		t.Fatalf("actions = %v, want only the get", got)
	}
	if f.m.apiVersions["uid-1"] != 1 {
		t.Fatal("an up-to-date status was not recorded as written")
	}
}

func TestFailedWriteIsRetriedWithBackoff(t *testing.T) {
	pod := apiPod("p", "uid-1")
	f := newFixture(t, pod)
	conflicts := 1
	f.client.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, apiruntime.Object, error) {
		if conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(podsResource, "p", errors.New("uid mismatch"))
		}
		return false, nil, nil
	})
	f.m.SetPodStatus(pod, running())
	f.sync(false)
	if f.apiPod("p").Status.Phase == corev1.PodRunning {
		t.Fatal("the status was written despite the conflict")
	}
	if r := f.m.retries["uid-1"]; r.delay != minRetry {
		t.Fatalf("retry delay = %v, want %v", r.delay, minRetry)
	}
	f.actions()
	f.sync(false) // still backing off
	if got := f.actions(); len(got) != 0 {
		t.Fatalf("actions while backing off = %v, want none", got)
	}
	f.clk.Step(minRetry)
	f.sync(false)
	if got := f.apiPod("p").Status.Phase; got != corev1.PodRunning {
		t.Fatalf("phase after the retry = %s, want Running", got)
	}
	if _, ok := f.m.retries["uid-1"]; ok {
		t.Fatal("the retry was not forgotten after success")
	}
}

func TestUnreachableServerGetsTheNewestStatusWhenItReturns(t *testing.T) {
	pod := apiPod("p", "uid-1")
	f := newFixture(t, pod)
	down := true
	f.client.PrependReactor("get", "pods", func(k8stesting.Action) (bool, apiruntime.Object, error) {
		if down {
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	wantDelays := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}
	for i, want := range wantDelays {
		s := running()
		s.Message = []string{"one", "two", "three"}[i]
		f.m.SetPodStatus(pod, s)
		f.clk.Step(f.m.retries["uid-1"].delay)
		f.sync(false)
		if got := f.m.retries["uid-1"].delay; got != want {
			t.Fatalf("delay after failure %d = %v, want %v", i+1, got, want)
		}
	}
	for range 10 {
		f.clk.Step(time.Minute)
		f.sync(true)
	}
	if got := f.m.retries["uid-1"].delay; got != maxRetry {
		t.Fatalf("delay after many failures = %v, want the cap %v", got, maxRetry)
	}

	down = false
	f.clk.Step(maxRetry)
	f.sync(false)
	got := f.apiPod("p").Status
	if got.Phase != corev1.PodRunning || got.Message != "three" {
		t.Fatalf("API status = %s %q, want the newest (Running, three)", got.Phase, got.Message)
	}
	if f.m.apiVersions["uid-1"] != 3 {
		t.Fatalf("written version = %d, want 3", f.m.apiVersions["uid-1"])
	}
}

func TestStatusChangedElsewhereIsWrittenAgain(t *testing.T) {
	pod := apiPod("p", "uid-1")
	f := newFixture(t, pod)
	f.m.SetPodStatus(pod, running())
	f.sync(false)
	f.pods.set(f.apiPod("p"))
	f.actions()
	f.sync(true)
	if got := f.actions(); len(got) != 0 {
		t.Fatalf("actions when the API agrees = %v, want none", got)
	}

	// Someone else marks the pod not ready; the agent's source sees it.
	changed := f.apiPod("p")
	changed.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	if _, err := f.client.CoreV1().Pods("default").UpdateStatus(t.Context(), changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.pods.set(changed)
	f.actions()
	f.sync(false)
	if got := f.actions(); len(got) != 0 {
		t.Fatalf("actions before the periodic pass = %v, want none", got)
	}
	f.sync(true)
	ready := findCondition(f.apiPod("p").Status.Conditions, corev1.PodReady)
	if ready == nil || ready.Status != corev1.ConditionTrue {
		t.Fatalf("Ready = %+v after the periodic pass, want the agent's True", ready)
	}
}

func TestRemovedStatusIsForgotten(t *testing.T) {
	pod := apiPod("p", "uid-1")
	f := newFixture(t, pod)
	f.m.SetPodStatus(pod, running())
	f.sync(false)
	f.m.RemovePodStatus(pod.UID)
	f.sync(true)
	if len(f.m.apiVersions) != 0 || len(f.m.retries) != 0 {
		t.Fatalf("apiVersions, retries = %v, %v after removal; want both empty", f.m.apiVersions, f.m.retries)
	}
}
