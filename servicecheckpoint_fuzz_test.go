package nodekit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzServiceCheckpoint writes arbitrary bytes as the saved Services of an
// arbitrary namespace and lists them as the service environment does while
// the agent runs its checkpoint offline. No panic; a namespace that cannot
// name a file is an error; every Service served is not nil and is of the
// namespace asked for; what is served saves and loads back to the same
// JSON. The same bytes as a pod checkpoint file give checkpointedNamespaces
// either an error or a set that keeps the default namespace and the pod's.
func FuzzServiceCheckpoint(f *testing.F) {
	list, _ := json.Marshal([]*corev1.Service{
		svc("default", "kubernetes", "10.96.0.1"),
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: corev1.ServiceSpec{
			ClusterIP: "10.96.4.2", Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}},
	})
	f.Add("default", list)
	f.Add("kube-system", list)
	f.Add("default", []byte(`[]`))
	f.Add("default", []byte(`null`))
	f.Add("default", []byte(`[null]`))
	f.Add("default", []byte(`[{"metadata":{"name":"a","namespace":"default"},"spec":{"clusterIP":"None"}},{}]`))
	f.Add("default", []byte(`{"metadata":{"namespace":"default"}}`))
	f.Add("..", list)
	f.Add("a/b", list)
	f.Add("", list)
	f.Add("default", []byte(`[{"metadata":{"name":"a","creationTimestamp":"2026-12-05T10:11:12.999Z"}}]`))
	f.Fuzz(func(t *testing.T, namespace string, data []byte) {
		dir := t.TempDir()
		s := &checkpointedServices{inner: &fakeServices{}, offline: offlineNow(), dir: dir, log: logr.Discard()}
		path, perr := s.path(namespace)
		if perr != nil {
			if _, err := s.ListServices(namespace); err == nil {
				t.Fatalf("namespace %q names no file, yet listing it gave no error", namespace)
			}
			checkNamespaces(t, data)
			return
		}
		if filepath.Dir(path) != dir {
			t.Fatalf("namespace %q names %s, outside %s", namespace, path, dir)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Skip() // a name the file system refuses
		}
		got, err := s.ListServices(namespace)
		if err != nil {
			checkNamespaces(t, data)
			return
		}
		for i, svc := range got {
			if svc == nil {
				t.Fatalf("service %d of %q is nil", i, namespace)
			}
			if svc.Namespace != namespace {
				t.Fatalf("service %q of namespace %q served for namespace %q", svc.Name, svc.Namespace, namespace)
			}
		}
		first, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("encode loaded services: %v", err)
		}
		other := &checkpointedServices{inner: &fakeServices{}, offline: offlineNow(), dir: t.TempDir(), log: logr.Discard()}
		if err := other.save(namespace, got); err != nil {
			t.Fatalf("save loaded services: %v", err)
		}
		again, err := other.ListServices(namespace)
		if err != nil {
			t.Fatalf("load saved services: %v", err)
		}
		if second, _ := json.Marshal(again); !bytes.Equal(second, first) {
			t.Fatalf("saved and loaded again:\n%s\nwant:\n%s", second, first)
		}
		checkNamespaces(t, data)
	})
}

// offlineNow is an API source that serves its checkpoint.
func offlineNow() *fakeOffline {
	o := &fakeOffline{}
	o.v.Store(true)
	return o
}

// checkNamespaces reads data as the only pod checkpoint file.
func checkNamespaces(t *testing.T, data []byte) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "uid-1.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	keep, err := checkpointedNamespaces(dir)
	if err != nil {
		if !strings.Contains(err.Error(), "uid-1.json") {
			t.Fatalf("error %q does not name the file", err)
		}
		return
	}
	if !keep[metav1.NamespaceDefault] {
		t.Fatalf("checkpointedNamespaces dropped the default namespace: %v", keep)
	}
	var pod corev1.Pod
	if json.Unmarshal(data, &pod) == nil && !keep[pod.Namespace] {
		t.Fatalf("namespace %q of the checkpointed pod is not kept: %v", pod.Namespace, keep)
	}
}
