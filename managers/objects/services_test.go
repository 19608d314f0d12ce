package objects

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

func service(ns, name, ip string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{ClusterIP: ip}}
}

func serviceNames(t *testing.T, s *Services, ns string) []string {
	t.Helper()
	svcs, err := s.ListServices(ns)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, svc := range svcs {
		out = append(out, svc.Name)
	}
	sort.Strings(out)
	return out
}

func TestServicesListsAndWatchesEveryNamespace(t *testing.T) {
	client := fake.NewClientset(service("default", "kubernetes", "10.0.0.1"), service("ns", "web", "10.0.0.2"), service("other", "db", "10.0.0.3"))
	s := NewServices(client, clocktesting.NewFakeClock(epoch), logr.Discard())
	if s.HasSynced() {
		t.Fatal("HasSynced before Run")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run = %v", err)
			}
		case <-time.After(waitLimit):
			t.Error("Run did not return")
		}
	}()
	until(t, "services synced", s.HasSynced)
	if got := serviceNames(t, s, "ns"); len(got) != 1 || got[0] != "web" {
		t.Errorf("services of ns = %v, want [web]", got)
	}
	if got := serviceNames(t, s, "default"); len(got) != 1 || got[0] != "kubernetes" {
		t.Errorf("services of default = %v, want [kubernetes]", got)
	}
	if _, err := client.CoreV1().Services("ns").Create(ctx, service("ns", "api", "10.0.0.4"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	until(t, "new service seen", func() bool { return len(serviceNames(t, s, "ns")) == 2 })
	if err := s.Run(ctx); err == nil {
		t.Error("second Run returned nil")
	}
}
