package status

import (
	"errors"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/nodekit/nodekit/sources"
)

func deletedPod(name string, uid types.UID) *corev1.Pod {
	p := apiPod(name, uid)
	now := metav1.NewTime(epoch)
	p.DeletionTimestamp = &now
	p.DeletionGracePeriodSeconds = new(int64)
	return p
}

// deletions returns the delete actions sent.
func deletions(f *fixture) []k8stesting.DeleteActionImpl {
	var out []k8stesting.DeleteActionImpl
	for _, a := range f.client.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			out = append(out, d)
		}
	}
	return out
}

func TestDeletedPodLeavesTheAPIOnceReclaimedAndWritten(t *testing.T) {
	pod := deletedPod("p", "uid-1")
	f := newFixture(t, pod)
	f.m.SetPodStatus(pod, withPhase(running(), corev1.PodSucceeded))
	f.sync(false)
	if got := deletions(f); len(got) != 0 {
		t.Fatalf("deleted %d times while resources are not reclaimed", len(got))
	}
	if f.apiPod("p").Status.Phase != corev1.PodSucceeded {
		t.Fatal("the final status was not written")
	}

	f.deletion.set("uid-1", true)
	f.clk.Step(minRetry)
	f.sync(false) // the retry looks again
	got := deletions(f)
	if len(got) != 1 {
		t.Fatalf("deletes = %d once reclaimed, want 1", len(got))
	}
	opts := got[0].GetDeleteOptions()
	if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 {
		t.Errorf("grace period = %v, want 0", opts.GracePeriodSeconds)
	}
	if opts.Preconditions == nil || opts.Preconditions.UID == nil || *opts.Preconditions.UID != "uid-1" {
		t.Errorf("preconditions = %+v, want UID uid-1", opts.Preconditions)
	}

	f.client.ClearActions()
	f.clk.Step(maxRetry)
	f.sync(true)
	if got := f.actions(); len(got) != 0 {
		t.Fatalf("actions after the pod was deleted = %v, want none", got)
	}
}

func TestDeletedPodIsFoundByThePeriodicPass(t *testing.T) {
	pod := deletedPod("p", "uid-1")
	f := newFixture(t, pod)
	f.m.SetPodStatus(pod, withPhase(running(), corev1.PodFailed))
	f.sync(false)
	f.m.retries = map[types.UID]retry{} // no retry pending: only the pass can find it
	f.deletion.set("uid-1", true)
	f.sync(false)
	if got := deletions(f); len(got) != 0 {
		t.Fatal("a signal-driven sync deleted a pod whose status was already written")
	}
	f.sync(true)
	if got := deletions(f); len(got) != 1 {
		t.Fatalf("deletes after the periodic pass = %d, want 1", len(got))
	}
}

func TestNoDeletionUntilTheNewestStatusIsWritten(t *testing.T) {
	pod := deletedPod("p", "uid-1")
	f := newFixture(t, pod)
	f.deletion.set("uid-1", true)
	f.client.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, apiruntime.Object, error) {
		return true, nil, errors.New("etcd timeout")
	})
	f.m.SetPodStatus(pod, withPhase(running(), corev1.PodSucceeded))
	f.sync(false)
	f.clk.Step(maxRetry)
	f.sync(true)
	if got := deletions(f); len(got) != 0 {
		t.Fatalf("deleted %d times before the final status was written", len(got))
	}
}

func TestPodsThatAreNeverDeletedHere(t *testing.T) {
	tests := []struct {
		name     string
		pod      func() *corev1.Pod
		deletion bool
	}{
		{
			name: "a mirror pod is never deleted",
			pod: func() *corev1.Pod {
				p := deletedPod("p", "uid-1")
				p.Annotations = map[string]string{sources.AnnotationMirror: "hash"}
				return p
			},
			deletion: true,
		},
		{
			name:     "without a DeletionSafety no pod is deleted",
			pod:      func() *corev1.Pod { return deletedPod("p", "uid-1") },
			deletion: false,
		},
		{
			name:     "a pod without a deletion timestamp is not deleted",
			pod:      func() *corev1.Pod { return apiPod("p", "uid-1") },
			deletion: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := tt.pod()
			f := newFixture(t, pod)
			if !tt.deletion {
				f.m = New(f.client, f.pods, nil, f.clk, logr.Discard(), Config{})
			}
			f.deletion.set("uid-1", true)
			f.m.SetPodStatus(pod, withPhase(running(), corev1.PodSucceeded))
			f.sync(false)
			f.clk.Step(maxRetry)
			f.sync(true)
			if got := deletions(f); len(got) != 0 {
				t.Fatalf("deleted %d times, want never", len(got))
			}
		})
	}
}
