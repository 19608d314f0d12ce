package file

import (
	"fmt"
	"strings"
	"testing"
)

// withMeta is manifest("web", "nginx:1") with extra metadata lines.
func withMeta(meta string) string {
	return strings.Replace(manifest("web", "nginx:1"), "  name: web\n", "  name: web\n"+meta, 1)
}

func TestScanRefusesAUIDOrNamespaceThatIsNotOnePathElement(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ meta, field string }{
		{"  uid: x/../../../somewhere\n", "metadata.uid"},
		{"  uid: ..\n", "metadata.uid"},
		{"  uid: \"a\\0b\"\n", "metadata.uid"},
		{"  namespace: ..\n", "metadata.namespace"},
		{"  namespace: a/b\n", "metadata.namespace"},
	} {
		tmp := t.TempDir()
		evil := join(tmp, "evil.yaml")
		writeFile(t, join(tmp, "good.yaml"), manifest("good", "nginx:1"))
		writeFile(t, evil, withMeta(c.meta))
		log, lines := newLogger()
		pods := scanOK(t, newDir(tmp, "n", log))
		if len(pods) != 1 || pods[0].Name != "good-n" {
			t.Errorf("%s: pods %v, want only good-n", c.meta, names(pods))
		}
		if got := lines.drain(); count(got, `"Could not read pod manifest"`, quoted(evil), c.field+": ") != 1 {
			t.Errorf("%s: log lines %q, want one error naming %s and %s", c.meta, got, evil, c.field)
		}
	}
}

func TestParseRefusesAPIObjectReferences(t *testing.T) {
	t.Parallel()
	d := newDir("/etc/kubernetes/manifests", "node-1", logrDiscard())
	for _, c := range []struct{ name, edit, field, resource string }{
		{"a secret volume", "  volumes:\n  - name: s\n    secret: {secretName: admin-token}\n", "spec.volumes[0].secret", "secrets"},
		{"a configMap env var", "    env:\n    - name: E\n      valueFrom: {configMapKeyRef: {name: c, key: k}}\n",
			"spec.containers[0].env[0].valueFrom.configMapKeyRef", "configmaps"},
		{"a secret envFrom", "    envFrom:\n    - secretRef: {name: s}\n", "spec.containers[0].envFrom[0].secretRef", "secrets"},
		{"a service account", "  serviceAccountName: admin\n", "spec.serviceAccountName", "serviceaccounts"},
		{"an image pull secret", "  imagePullSecrets:\n  - name: regcred\n", "spec.imagePullSecrets[0]", "secrets"},
		{"a projected token", "  volumes:\n  - name: t\n    projected:\n      sources:\n      - serviceAccountToken: {path: token}\n",
			"spec.volumes[0].projected.sources[0].serviceAccountToken", "serviceaccounts (via projected volumes)"},
		{"a PVC", "  volumes:\n  - name: p\n    persistentVolumeClaim: {claimName: data}\n", "spec.volumes[0].persistentVolumeClaim", "persistentvolumeclaims"},
		{"a resource claim", "  resourceClaims:\n  - name: gpu\n    resourceClaimName: gpu\n", "spec.resourceClaims", "resourceclaims"},
	} {
		_, err := d.parse("/etc/kubernetes/manifests/web.yaml", []byte(manifest("web", "nginx:1")+c.edit))
		want := fmt.Sprintf("pod default/web-node-1: %s: Forbidden: static pods may not reference %s", c.field, c.resource)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: parse error %v, want one containing %q", c.name, err, want)
		}
	}
	if _, err := d.parse("/etc/kubernetes/manifests/web.yaml", []byte(manifest("web", "nginx:1")+"  automountServiceAccountToken: true\n")); err != nil {
		t.Errorf("automountServiceAccountToken: parse error %v, want none (no token is mounted into a static pod)", err)
	}
}

func TestParseRefusesAManifestBeyondTheEnvLimit(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(manifest("web", "nginx:1") + "    env:\n")
	for i := range 20000 {
		fmt.Fprintf(&b, "    - {name: E%d, value: x}\n", i)
	}
	d := newDir("/etc/kubernetes/manifests", "node-1", logrDiscard())
	_, err := d.parse("/etc/kubernetes/manifests/web.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "spec.containers[0].env: Forbidden: the pod's containers have 20000 env and envFrom entries in all, more than the limit of 10000") {
		t.Fatalf("parse error %v, want the env limit naming spec.containers[0].env", err)
	}
}

func TestExtraDocumentsDoesNotConvertTheFirstDocumentAgain(t *testing.T) {
	var b strings.Builder
	b.WriteString(manifest("web", "nginx:1") + "    env:\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "    - {name: E%d, value: x}\n", i)
	}
	data := []byte(b.String())
	// The YAML reader splits documents line by line, about one allocation
	// a line; converting the first document to JSON again made 33 an entry.
	if allocs := testing.AllocsPerRun(3, func() { _ = extraDocuments(data) }); allocs > 5000 {
		t.Fatalf("extraDocuments of one document of 2,000 env vars made %.0f allocations, want at most 5,000", allocs)
	}
	if n := extraDocuments(append(data, []byte("---\n"+manifest("b", "x")+"---\n# only a comment\n")...)); n != 1 {
		t.Fatalf("extraDocuments = %d, want 1 (an empty document is not counted)", n)
	}
}
