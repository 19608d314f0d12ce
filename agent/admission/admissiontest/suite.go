package admissiontest

import (
	"fmt"
	"reflect"
	"regexp"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/agent/admission"
)

// Case is one pod the handler must admit or refuse.
type Case struct {
	// Name describes the case.
	Name string
	// Pod is the pod asking to run.
	Pod *corev1.Pod
	// OtherPods are the node's other active pods.
	OtherPods []*corev1.Pod
	// Admit is the expected verdict.
	Admit bool
	// Reason, when set, is the expected reason of a refusal.
	Reason string
}

// Suite runs Check on h and fails t with every violation.
func Suite(t *testing.T, h admission.Handler, cases []Case) {
	t.Helper()
	for _, err := range Check(h, cases) {
		t.Error(err)
	}
}

// reasonPattern is one CamelCase word, as the kubelet's reasons
// (OutOfcpu, SysctlForbidden, UnexpectedAdmissionError).
var reasonPattern = regexp.MustCompile(`^[A-Z][A-Za-z0-9\-./]*$`)

// Check returns every violation of the contract by h on cases.
func Check(h admission.Handler, cases []Case) (errs []error) {
	fail := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
	}
	for _, c := range append(cases, Case{Name: "a bare pod with no other pods", Pod: &corev1.Pod{}, Admit: true}) {
		pod, others := c.Pod.DeepCopy(), deepCopies(c.OtherPods)
		r, panicked := admit(h, &admission.Attributes{Pod: pod, OtherPods: others})
		if panicked != nil {
			fail(c.Name, "Admit panicked: %v", panicked)
			continue
		}
		if c.Name == "a bare pod with no other pods" {
			if !r.Admit && (r.Reason == "" || r.Message == "") {
				fail(c.Name, "refused a bare pod without a reason and a message: %+v", r)
			}
			continue
		}
		if r.Admit != c.Admit {
			fail(c.Name, "verdict %+v, want admit=%t", r, c.Admit)
		}
		if !r.Admit {
			if !reasonPattern.MatchString(r.Reason) {
				fail(c.Name, "refusal reason %q is not one CamelCase word", r.Reason)
			}
			if r.Message == "" {
				fail(c.Name, "refusal %q has no message", r.Reason)
			}
			if c.Reason != "" && r.Reason != c.Reason {
				fail(c.Name, "refusal reason %q, want %q", r.Reason, c.Reason)
			}
		}
		if !reflect.DeepEqual(pod, c.Pod) || !reflect.DeepEqual(others, c.OtherPods) {
			fail(c.Name, "Admit mutated the pod or the other pods")
		}
		again, _ := admit(h, &admission.Attributes{Pod: c.Pod.DeepCopy(), OtherPods: deepCopies(c.OtherPods)})
		if again != r {
			fail(c.Name, "the same attributes got %+v, then %+v", r, again)
		}
	}
	return errs
}

func admit(h admission.Handler, attrs *admission.Attributes) (r admission.Result, panicked any) {
	defer func() { panicked = recover() }()
	return h.Admit(attrs), nil
}

func deepCopies(pods []*corev1.Pod) []*corev1.Pod {
	if pods == nil {
		return nil
	}
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}
