package nodestatus

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRegistrationCreatesTheNodeWithItsTaints(t *testing.T) {
	t.Parallel()
	taints := []corev1.Taint{
		{Key: "example.com/edge", Value: "true", Effect: corev1.TaintEffectNoSchedule},
		{Key: "dedicated", Effect: corev1.TaintEffectNoExecute},
	}
	h := newHarness(t, Config{NodeName: "node-1", Taints: taints})
	h.start()
	h.wait(eventSynced)
	got := h.node().Spec.Taints
	if len(got) != 2 || got[0].Key != "example.com/edge" || got[0].Value != "true" || got[0].Effect != corev1.TaintEffectNoSchedule ||
		got[1].Key != "dedicated" || got[1].Effect != corev1.TaintEffectNoExecute {
		t.Fatalf("taints %+v, want %+v", got, taints)
	}
	h.stop()
}

func TestAnExistingNodeKeepsItsTaints(t *testing.T) {
	t.Parallel()
	existing := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "old-uid"},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "kept", Effect: corev1.TaintEffectPreferNoSchedule}}},
	}
	h := newHarness(t, Config{NodeName: "node-1", Taints: []corev1.Taint{{Key: "new", Effect: corev1.TaintEffectNoSchedule}}}, existing)
	h.start()
	h.wait(eventSynced)
	got := h.node().Spec.Taints
	if len(got) != 1 || got[0].Key != "kept" {
		t.Fatalf("taints %+v: a restart must leave an existing node's taints alone, as the kubelet does", got)
	}
	h.stop()
}

func TestTaintValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		taints  []corev1.Taint
		wantErr bool
	}{
		{"a taint with a key, a value and an effect is valid", []corev1.Taint{{Key: "a.io/b", Value: "c", Effect: corev1.TaintEffectNoSchedule}}, false},
		{"a bad key is refused", []corev1.Taint{{Key: "a b", Effect: corev1.TaintEffectNoSchedule}}, true},
		{"a bad value is refused", []corev1.Taint{{Key: "a", Value: "b c", Effect: corev1.TaintEffectNoSchedule}}, true},
		{"an unknown effect is refused", []corev1.Taint{{Key: "a", Effect: "Sometimes"}}, true},
		{"a missing effect is refused", []corev1.Taint{{Key: "a"}}, true},
		{"a key twice with one effect is refused", []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}, {Key: "a", Value: "x", Effect: corev1.TaintEffectNoSchedule}}, true},
		{"a key twice with two effects is valid", []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}, {Key: "a", Effect: corev1.TaintEffectNoExecute}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Config{NodeName: "n", Taints: tt.taints}.Validate()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Validate() = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}
