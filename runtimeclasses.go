package nodekit

import (
	"context"

	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/cri"
)

// runtimeClassSetter is the optional runtime capability of resolving pods'
// RuntimeClasses.
type runtimeClassSetter interface {
	SetRuntimeClassGetter(cri.RuntimeClassGetter)
}

// setRuntimeClasses gives the runtime a client-backed RuntimeClassGetter
// when there is a Kubernetes client and the runtime (after any embedder's
// decoration) takes one (cri.Manager does).
func setRuntimeClasses(rt noderuntime.Runtime, client kubernetes.Interface) {
	if s, ok := rt.(runtimeClassSetter); ok && client != nil {
		s.SetRuntimeClassGetter(clientRuntimeClasses{client})
	}
}

// clientRuntimeClasses reads RuntimeClasses from the API server, which the
// Node authorizer lets every node do. A RuntimeClass is read when a sandbox
// is created, which is rare enough not to need a watch.
type clientRuntimeClasses struct {
	client kubernetes.Interface
}

// GetRuntimeClass implements cri.RuntimeClassGetter; the API server's
// NotFound error is returned as it is.
func (c clientRuntimeClasses) GetRuntimeClass(ctx context.Context, name string) (*nodev1.RuntimeClass, error) {
	return c.client.NodeV1().RuntimeClasses().Get(ctx, name, metav1.GetOptions{})
}
