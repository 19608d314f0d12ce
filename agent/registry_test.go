package agent

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// registrar records RegisterPod and UnregisterPod calls.
type registrar struct{ calls []string }

func (r *registrar) RegisterPod(p *corev1.Pod)   { r.calls = append(r.calls, "register "+p.Name) }
func (r *registrar) UnregisterPod(p *corev1.Pod) { r.calls = append(r.calls, "unregister "+p.Name) }

func TestRegistryRegistersItsPodsButNotMirrorPods(t *testing.T) {
	r := NewRegistry()
	rec := &registrar{}
	r.SetObjectRegistrar(rec)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", UID: types.UID("u1")}}
	mirror := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: types.UID("m1"),
		Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "x"}}}
	r.Set(pod)
	r.Set(pod) // an update registers again: the references may have changed
	r.Set(mirror)
	r.Remove(mirror)
	r.Remove(pod)
	r.Remove(pod) // already gone: nothing to unregister
	want := []string{"register a", "register a", "unregister a"}
	if !reflect.DeepEqual(rec.calls, want) {
		t.Errorf("calls = %q, want %q", rec.calls, want)
	}
}
