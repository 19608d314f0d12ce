package nodekit

import (
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type fakeServices struct {
	synced bool
	byNS   map[string][]*corev1.Service
}

func (f *fakeServices) HasSynced() bool { return f.synced }
func (f *fakeServices) ListServices(ns string) ([]*corev1.Service, error) {
	return f.byNS[ns], nil
}

type fakeOffline struct{ v atomic.Bool }

func (f *fakeOffline) Offline() bool { return f.v.Load() }

func svc(ns, name, ip string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{ClusterIP: ip}}
}

func serviceNames(list []*corev1.Service) []string {
	out := []string{}
	for _, s := range list {
		out = append(out, s.Name)
	}
	return out
}

func TestCheckpointedServicesStandInOnlyWhileOffline(t *testing.T) {
	dir := t.TempDir()
	inner := &fakeServices{synced: true, byNS: map[string][]*corev1.Service{"default": {svc("default", "kubernetes", "10.0.0.1")}}}
	off := &fakeOffline{}
	s := &checkpointedServices{inner: inner, offline: off, dir: dir, log: logr.Discard()}
	if got, _ := s.ListServices("default"); !reflect.DeepEqual(serviceNames(got), []string{"kubernetes"}) {
		t.Fatalf("synced list = %v", serviceNames(got))
	}

	// The next run of the agent: the API server is away.
	inner = &fakeServices{}
	s = &checkpointedServices{inner: inner, offline: off, dir: dir, log: logr.Discard()}
	if s.HasSynced() {
		t.Fatal("HasSynced before the list and before the source went offline")
	}
	if got, _ := s.ListServices("default"); len(got) != 0 {
		t.Fatalf("list before offline = %v, want the inner (empty) one", serviceNames(got))
	}
	off.v.Store(true)
	if !s.HasSynced() {
		t.Fatal("HasSynced = false while offline with a checkpoint")
	}
	if got, _ := s.ListServices("default"); !reflect.DeepEqual(serviceNames(got), []string{"kubernetes"}) || got[0].Spec.ClusterIP != "10.0.0.1" {
		t.Fatalf("offline list = %v, want the saved kubernetes service", serviceNames(got))
	}
	if got, err := s.ListServices("never-asked"); err != nil || len(got) != 0 {
		t.Fatalf("offline list of an unsaved namespace = %v, %v; want none", got, err)
	}
	if _, err := s.ListServices("../etc"); err == nil {
		t.Fatal("a namespace that is no file name was accepted")
	}

	// Once the cluster's services are listed they win, even while offline.
	inner.synced = true
	inner.byNS = map[string][]*corev1.Service{"default": {svc("default", "kubernetes", "10.0.0.1"), svc("default", "new", "10.0.0.2")}}
	if got, _ := s.ListServices("default"); len(got) != 2 {
		t.Fatalf("list after the sync = %v, want the cluster's 2", serviceNames(got))
	}
}
