package http

import (
	"strings"
	"testing"

	"github.com/nodekit/nodekit/internal/podvalidation"
)

// FuzzDecode feeds arbitrary bytes to the Pod/PodList decoder. Nothing may
// panic, and every pod it accepts is a complete static pod of the node: a
// UID, the "-<node>" name suffix, the node name, a namespace, each of UID,
// name and namespace a single path element (the agent names directories
// after them), and a spec that validates.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(podYAML("web", "nginx:1.27")))
	f.Add([]byte(podListJSON("a", "b")))
	f.Add([]byte(podListJSON("a", "a")))
	f.Add([]byte(`{"kind":"List","items":[{"kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":"c","image":"i"}]}}]}`))
	f.Add([]byte("items: [1, 2]\n"))
	f.Add([]byte("kind: PodList\nitems:\n- metadata: {name: y}\n  spec: {containers: [{name: c, image: i}]}\n"))
	f.Add([]byte("{"))
	f.Add([]byte(`{"kind":"PodList","items":[{"metadata":{"name":"x","uid":"a/../../b"},"spec":{"containers":[{"name":"c","image":"i"}]}}]}`))
	f.Add([]byte("metadata: {name: y, uid: .}\nspec: {containers: [{name: c, image: i}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pods, _, err := decode(data, "http://example.com/pods", "node-1")
		if err != nil {
			return
		}
		for _, p := range pods {
			if p.UID == "" || !strings.HasSuffix(p.Name, "-node-1") || p.Spec.NodeName != "node-1" || p.Namespace == "" {
				t.Fatalf("accepted an incomplete pod: uid %q name %q node %q namespace %q", p.UID, p.Name, p.Spec.NodeName, p.Namespace)
			}
			for _, s := range []string{string(p.UID), p.Name, p.Namespace} {
				if s == "." || s == ".." || strings.ContainsAny(s, "/\x00") {
					t.Fatalf("accepted a pod whose UID %q, name %q or namespace %q is not a single path element", p.UID, p.Name, p.Namespace)
				}
			}
			if errs := podvalidation.Validate(p); len(errs) > 0 {
				t.Fatalf("accepted a pod that does not validate: %v", errs)
			}
		}
	})
}
