package admissiontest_test

import (
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/agent/admission"
	"github.com/nodekit/nodekit/agent/admission/admissiontest"
)

func pod(name string, gpus string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	if gpus != "" {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpus)}
	}
	return p
}

// cases hold for the default chain with MaxPods 2 and no node resources.
var cases = []admissiontest.Case{
	{Name: "a plain pod on an empty node is admitted", Pod: pod("a", ""), Admit: true},
	{Name: "a third pod is OutOfpods", Pod: pod("c", ""), OtherPods: []*corev1.Pod{pod("a", ""), pod("b", "")}, Reason: "OutOfpods"},
	{Name: "a GPU the node lacks is refused", Pod: pod("g", "1"), Reason: "OutOfnvidia.com/gpu"},
}

func TestTheDefaultChainPassesTheSuite(t *testing.T) {
	admissiontest.Suite(t, agent.DefaultAdmission(nil, agent.Config{MaxPods: 2}, logr.Discard()), cases)
}

// The suite fails handlers that break the contract.
func TestTheSuiteFailsBrokenHandlers(t *testing.T) {
	defaults := agent.DefaultAdmission(nil, agent.Config{MaxPods: 2}, logr.Discard())
	broken := map[string]admission.Handler{
		"one that labels the pod it admits": append(admission.Chain{admission.HandlerFunc(func(a *admission.Attributes) admission.Result {
			a.Pod.Labels["admitted"] = "yes"
			return admission.Admitted()
		})}, defaults...),
		"one that refuses without a reason": admission.HandlerFunc(func(a *admission.Attributes) admission.Result {
			if r := defaults.Admit(a); !r.Admit {
				return admission.Refused("", r.Message)
			}
			return admission.Admitted()
		}),
		"one that forgets the other pods": agent.DefaultAdmission(nil, agent.Config{MaxPods: 100}, logr.Discard()),
		"one that flips its verdict":      flipper(defaults),
		"one that panics on a bare pod": admission.HandlerFunc(func(a *admission.Attributes) admission.Result {
			_ = a.Pod.Spec.Containers[0]
			return defaults.Admit(a)
		}),
	}
	for name, h := range broken {
		if errs := admissiontest.Check(h, cases); len(errs) == 0 {
			t.Errorf("the suite passed %s", name)
		} else {
			t.Logf("%s: %v", name, errs[0])
		}
	}
}

// flipper refuses every other call.
func flipper(h admission.Handler) admission.Handler {
	n := 0
	return admission.HandlerFunc(func(a *admission.Attributes) admission.Result {
		n++
		if n%2 == 0 {
			return admission.Refused("Flipped", "every other call")
		}
		return h.Admit(a)
	})
}
