package file

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/sources"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		content   string
		wantErr   string   // substring of the error; "" for a pod
		wantPod   string   // the static pod's name
		wantField []string // fields that must be logged as unknown
	}{
		{name: "A YAML manifest gives a pod.", content: manifest("web", "nginx:1.27"), wantPod: "web-node-1"},
		{name: "A JSON manifest gives a pod.",
			content: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"main","image":"nginx:1.27"}]}}`,
			wantPod: "web-node-1"},
		{name: "A manifest without kind and apiVersion gives a pod.",
			content: "metadata:\n  name: web\nspec:\n  containers:\n  - name: main\n    image: nginx\n", wantPod: "web-node-1"},
		{name: "An unknown field is logged with its path and the pod still runs.",
			content:   manifest("web", "nginx:1") + "    foo: bar\n",
			wantPod:   "web-node-1",
			wantField: []string{"spec.containers[0].foo"}},
		{name: "Every unknown field is logged, however deep.",
			content:   manifest("web", "nginx:1") + "    foo: bar\n  hostNetwerk: true\nstatus:\n  phaze: x\n",
			wantPod:   "web-node-1",
			wantField: []string{"spec.containers[0].foo", "spec.hostNetwerk", "status.phaze"}},
		{name: "Broken YAML is an error.", content: "metadata:\n  name: [web\n", wantErr: "parse YAML"},
		{name: "An empty file is an error.", content: "# nothing here\n", wantErr: "manifest is empty"},
		{name: "A wrongly typed field is an error.", content: manifest("web", "nginx") + "  hostNetwork: sometimes\n", wantErr: "decode pod"},
		{name: "A missing name is an error.", content: "kind: Pod\nspec:\n  containers:\n  - name: c\n    image: x\n", wantErr: "metadata.name: Required value"},
		{name: "Duplicate container names are an error.",
			content: manifest("web", "nginx") + "  - name: main\n    image: busybox\n",
			wantErr: `spec.containers[1].name: Duplicate value: "main"`},
		{name: "An init container sharing a container's name is an error.",
			content: manifest("web", "nginx") + "  initContainers:\n  - name: main\n    image: busybox\n",
			wantErr: `spec.containers[0].name: Duplicate value: "main"`},
		{name: "Kind Deployment is rejected.", content: strings.Replace(manifest("web", "nginx"), "kind: Pod", "kind: Deployment", 1),
			wantErr: `kind: Unsupported value: "Deployment": supported values: "Pod"`},
		{name: "An apiVersion other than v1 is rejected.", content: strings.Replace(manifest("web", "nginx"), "apiVersion: v1", "apiVersion: apps/v1", 1),
			wantErr: `apiVersion: Unsupported value: "apps/v1": supported values: "v1"`},
		{name: "A pod without containers is rejected.", content: "metadata:\n  name: web\nspec: {}\n",
			wantErr: "spec.containers: Required value"},
		{name: "A container name that is not a DNS label is rejected.", content: strings.Replace(manifest("web", "nginx"), "name: main", "name: Main_1", 1),
			wantErr: `spec.containers[0].name: Invalid value: "Main_1"`},
		{name: "A container without image is rejected.", content: "metadata:\n  name: web\nspec:\n  containers:\n  - name: c\n",
			wantErr: "spec.containers[0].image: Required value"},
		{name: "A name too long with the node name appended is rejected.", content: manifest(strings.Repeat("a", 250), "nginx"),
			wantErr: "metadata.name and node name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			log, lines := newLogger()
			d := newDir("/etc/kubernetes/manifests", "Node-1", log)
			path := "/etc/kubernetes/manifests/web.yaml"
			pod, err := d.parse(path, []byte(tc.content))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parse() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse() error = %v", err)
			}
			if pod.Name != tc.wantPod {
				t.Errorf("pod name = %q, want %q", pod.Name, tc.wantPod)
			}
			got := lines.drain()
			for _, f := range tc.wantField {
				if count(got, `"Unknown field in pod manifest"`, `"field"=`+quoted(f), `"file"=`+quoted(path)) != 1 {
					t.Errorf("log lines %q: want one naming unknown field %s and the file", got, f)
				}
			}
			if len(got) != len(tc.wantField) {
				t.Errorf("got %d log lines %q, want %d", len(got), got, len(tc.wantField))
			}
		})
	}
}

func TestStaticPodIdentity(t *testing.T) {
	t.Parallel()
	const path = "/etc/kubernetes/manifests/web.yaml"
	uid := func(t *testing.T, content, path, node string) *corev1.Pod {
		t.Helper()
		decoded, _, err := decode([]byte(content))
		if err != nil {
			t.Fatal(err)
		}
		pod, err := staticPod(decoded, path, node)
		if err != nil {
			t.Fatal(err)
		}
		return pod
	}
	base := uid(t, manifest("web", "nginx:1"), path, "node-1")
	tests := []struct {
		name    string
		pod     *corev1.Pod
		sameUID bool
	}{
		{"The same content gives the same UID.", uid(t, manifest("web", "nginx:1"), path, "node-1"), true},
		{"Comments and formatting do not change the UID.", uid(t, "# comment\n"+manifest("web", "nginx:1"), path, "node-1"), true},
		{"An edit gives a new UID.", uid(t, manifest("web", "nginx:2"), path, "node-1"), false},
		{"Another node gives another UID.", uid(t, manifest("web", "nginx:1"), path, "node-2"), false},
		{"Another file gives another UID.", uid(t, manifest("web", "nginx:1"), "/etc/kubernetes/manifests/web2.yaml", "node-1"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if (tc.pod.UID == base.UID) != tc.sameUID {
				t.Errorf("UID %s vs %s: same = %v, want %v", tc.pod.UID, base.UID, !tc.sameUID, tc.sameUID)
			}
			if tc.pod.Annotations[sources.AnnotationHash] != string(tc.pod.UID) {
				t.Errorf("config.hash = %q, want the UID %q", tc.pod.Annotations[sources.AnnotationHash], tc.pod.UID)
			}
		})
	}
	if len(base.UID) != 32 {
		t.Errorf("UID %q is not a hex MD5", base.UID)
	}
}

func TestStaticPodTransformations(t *testing.T) {
	t.Parallel()
	content := manifest("web", "nginx:1") + "  tolerations:\n  - operator: Exists\n    effect: NoExecute\n    tolerationSeconds: 5\n" +
		"  - key: k\n    operator: Exists\n    effect: NoSchedule\n"
	decoded, _, err := decode([]byte(content))
	if err != nil {
		t.Fatal(err)
	}
	pod, err := staticPod(decoded, "/m/web.yaml", "Node-A")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"The name gets the lowercase node name.", pod.Name, "web-node-a"},
		{"The namespace defaults to default.", pod.Namespace, "default"},
		{"spec.nodeName is the node.", pod.Spec.NodeName, "Node-A"},
		{"The phase is Pending.", pod.Status.Phase, corev1.PodPending},
		{"TypeMeta is cleared.", pod.Kind + pod.APIVersion, ""},
		{"API defaults are applied.", pod.Spec.RestartPolicy, corev1.RestartPolicyAlways},
		{"The NoExecute toleration replaces a narrower one.", len(pod.Spec.Tolerations), 2},
		{"The NoExecute toleration has no time limit.", pod.Spec.Tolerations[0].TolerationSeconds == nil, true},
		{"The decoded pod is not changed.", decoded.Name, "web"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s got %v, want %v", c.name, c.got, c.want)
		}
	}

	explicit, _, _ := decode([]byte(strings.Replace(manifest("web", "nginx:1"), "name: web", "name: web\n  uid: fixed", 1)))
	pod, err = staticPod(explicit, "/m/web.yaml", "n")
	if err != nil || pod.UID != "fixed" || pod.Annotations[sources.AnnotationHash] != "fixed" {
		t.Errorf("a manifest's own UID: got %v, %v; want it kept, as the kubelet keeps it", pod.UID, err)
	}
}
