package nodekit

import (
	"context"
	"testing"

	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestRuntimeClassesAreReadThroughTheClientWhenOneIsConfigured(t *testing.T) {
	if g := runtimeClassGetter(objectsParams{}); g != nil {
		t.Fatal("a RuntimeClassGetter was provided without a Kubernetes client")
	}
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Handler: "runc"}
	g := runtimeClassGetter(objectsParams{Client: fake.NewClientset(rc)})
	if g == nil {
		t.Fatal("no RuntimeClassGetter was provided with a Kubernetes client")
	}
	got, err := g.GetRuntimeClass(context.Background(), "fast")
	if err != nil || got.Handler != "runc" {
		t.Fatalf("GetRuntimeClass = %v, %v", got, err)
	}
	if _, err := g.GetRuntimeClass(context.Background(), "missing"); !apierrors.IsNotFound(err) {
		t.Fatalf("GetRuntimeClass of a missing class = %v, want NotFound", err)
	}
}
