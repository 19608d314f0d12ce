package podvalidation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateRefusesAUIDThatIsNotOnePathElement(t *testing.T) {
	t.Parallel()
	for _, uid := range []types.UID{"x/../../../somewhere", "..", ".", "a\x00b", "/abs", types.UID(strings.Repeat("u", 256)), ""} {
		p := validPod()
		p.UID = uid
		if !hasField(Validate(p), "metadata.uid") {
			t.Errorf("UID %q: Validate gave %v, want an error at metadata.uid", uid, Validate(p))
		}
	}
	for _, uid := range []types.UID{"0123456789abcdef0123456789abcdef", "5f0c1e2a-9c1b-4d0e-8a6f-0b6a3c2d1e0f", types.UID(strings.Repeat("u", 255)), "a..b"} {
		p := validPod()
		p.UID = uid
		if errs := Validate(p); len(errs) > 0 {
			t.Errorf("UID %q: Validate gave %v, want none", uid, errs)
		}
	}
}

func TestValidateIdentity(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, uid, podName, namespace string
		wantField                     string
	}{
		{"an API pod is fine", "5f0c1e2a-9c1b-4d0e-8a6f-0b6a3c2d1e0f", "web", "default", ""},
		{"a UID leaving the pods directory is refused", "x/../../../somewhere", "web", "default", "metadata.uid"},
		{"a UID of .. is refused", "..", "web", "default", "metadata.uid"},
		{"a missing UID is refused", "", "web", "default", "metadata.uid"},
		{"a name with a slash is refused", "u", "a/b", "default", "metadata.name"},
		{"a name of . is refused", "u", ".", "default", "metadata.name"},
		{"a namespace of .. is refused", "u", "web", "..", "metadata.namespace"},
		{"a namespace with a NUL byte is refused", "u", "web", "a\x00", "metadata.namespace"},
		{"a missing namespace is refused", "u", "web", "", "metadata.namespace"},
	} {
		p := &corev1.Pod{}
		p.UID, p.Name, p.Namespace = types.UID(c.uid), c.podName, c.namespace
		errs := ValidateIdentity(p)
		if c.wantField == "" && len(errs) > 0 || c.wantField != "" && (len(errs) != 1 || errs[0].Field != c.wantField) {
			t.Errorf("%s: ValidateIdentity gave %v, want an error at %q only", c.name, errs, c.wantField)
		}
	}
}

func hasField(errs field.ErrorList, f string) bool {
	for _, e := range errs {
		if e.Field == f {
			return true
		}
	}
	return false
}
