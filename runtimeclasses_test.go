package nodekit

import (
	"context"
	"testing"

	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/cri"
)

// classRuntime is a runtime that takes a RuntimeClassGetter.
type classRuntime struct {
	noderuntime.Runtime
	got cri.RuntimeClassGetter
}

func (r *classRuntime) SetRuntimeClassGetter(g cri.RuntimeClassGetter) { r.got = g }

func TestRuntimeClassesAreReadThroughTheClientWhenOneIsConfigured(t *testing.T) {
	rt := &classRuntime{}
	setRuntimeClasses(rt, nil)
	if rt.got != nil {
		t.Fatal("a RuntimeClassGetter was set without a Kubernetes client")
	}
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Handler: "runc"}
	setRuntimeClasses(rt, fake.NewClientset(rc))
	if rt.got == nil {
		t.Fatal("no RuntimeClassGetter was set with a Kubernetes client")
	}
	got, err := rt.got.GetRuntimeClass(context.Background(), "fast")
	if err != nil || got.Handler != "runc" {
		t.Fatalf("GetRuntimeClass = %v, %v", got, err)
	}
	if _, err := rt.got.GetRuntimeClass(context.Background(), "missing"); !apierrors.IsNotFound(err) {
		t.Fatalf("GetRuntimeClass of a missing class = %v, want NotFound", err)
	}
}
