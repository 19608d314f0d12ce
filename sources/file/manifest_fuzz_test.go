package file

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/internal/podvalidation"
)

// FuzzManifest feeds arbitrary bytes to the manifest decoder and the static
// pod validation. Nothing may panic; the validation of a pod gives the same
// errors every time; and a manifest that is accepted gives a static pod
// whose UID, name and namespace are single path elements (the agent names
// directories after them), that validates again after a JSON round trip,
// and whose defaults are already applied (setDefaults changes nothing).
func FuzzManifest(f *testing.F) {
	f.Add([]byte(manifest("web", "nginx:1.27")))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"main","image":"nginx"}]}}`))
	f.Add([]byte(manifest("web", "nginx") + "    ports:\n    - containerPort: 80\n      hostPort: 80\n  hostNetwork: true\n  terminationGracePeriodSeconds: -1\n"))
	f.Add([]byte(manifest("a", "x") + "---\n" + manifest("b", "y")))
	f.Add([]byte("metadata: [\n"))
	f.Add([]byte(strings.Replace(manifest("web", "nginx"), "  name: web\n", "  name: web\n  uid: x/../../../somewhere\n", 1)))
	f.Add([]byte(`{"metadata":{"name":"web","uid":"..","namespace":"kube-system"},"spec":{"containers":[{"name":"c","image":"i"}]}}`))
	d := newDir("/etc/kubernetes/manifests", "node-1", logr.Discard())
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "/etc/kubernetes/manifests/web.yaml"
		_ = extraDocuments(data)
		decoded, _, err := decode(data)
		if err != nil {
			return
		}
		if a, b := podvalidation.Summary(podvalidation.Validate(decoded)), podvalidation.Summary(podvalidation.Validate(decoded)); a != b {
			t.Fatalf("validation is not stable: %q, then %q", a, b)
		}
		pod, err := d.parse(path, data)
		if err != nil {
			return
		}
		if !singleElements(pod.UID, pod.Name, pod.Namespace) {
			t.Fatalf("accepted a static pod whose UID %q, name %q or namespace %q is not a single path element", pod.UID, pod.Name, pod.Namespace)
		}
		if errs := podvalidation.Validate(pod); len(errs) != 0 {
			t.Fatalf("an accepted static pod does not validate: %v", errs)
		}
		again := pod.DeepCopy()
		setDefaults(again)
		if !apiequality.Semantic.DeepEqual(pod, again) {
			t.Fatalf("setDefaults changed an accepted static pod: %+v vs %+v", pod.Spec, again.Spec)
		}
		js, err := json.Marshal(pod)
		if err != nil {
			t.Fatalf("encode accepted pod: %v", err)
		}
		back, _, err := decode(js)
		if err != nil {
			t.Fatalf("decode re-encoded pod %s: %v", js, err)
		}
		if errs := podvalidation.Validate(back); len(errs) != 0 {
			t.Fatalf("an accepted static pod no longer validates after a JSON round trip: %v\n%s", errs, js)
		}
	})
}

// singleElements reports whether the pod's UID, name and namespace are
// each one non-empty element of a path: no "/" or NUL, not "." or "..".
// It is written apart from podvalidation, whose check it tests.
func singleElements(uid types.UID, name, namespace string) bool {
	for _, s := range []string{string(uid), name, namespace} {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\x00") {
			return false
		}
	}
	return true
}
