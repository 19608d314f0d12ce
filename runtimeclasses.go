package nodekit

import (
	"context"

	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nodekit/nodekit/runtime/cri"
)

// runtimeClassGetter is the runtime's client-backed RuntimeClassGetter,
// nil without a Kubernetes client.
func runtimeClassGetter(p objectsParams) cri.RuntimeClassGetter {
	if p.Client == nil {
		return nil
	}
	return clientRuntimeClasses{p.Client}
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
